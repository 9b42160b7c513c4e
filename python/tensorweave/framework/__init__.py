"""Graph construction: dtypes, shapes, Graph, Operation, Tensor."""
