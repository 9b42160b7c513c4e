"""IndexedSlices: a sparse gradient, rows `indices` of a tensor of `dense_shape` holding
`values` (a row listed twice is the sum), as the gradients of gather give them."""


class IndexedSlices:
    def __init__(self, values, indices, dense_shape=None):
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self):
        return self._values

    @property
    def indices(self):
        return self._indices

    @property
    def dense_shape(self):
        return self._dense_shape

    @property
    def dtype(self):
        return self._values.dtype

    @property
    def graph(self):
        return self._values.graph

    @property
    def name(self):
        return self._values.name

    @property
    def op(self):
        return self._values.op

    def __repr__(self):
        return "IndexedSlices(indices=%s, values=%s, dense_shape=%s)" % (
            self._indices, self._values, self._dense_shape)
