#include "tensorweave/train/variables.h"

#include "tensorweave/ops.h"

namespace tw::train {

// Variables and their initializers are built outside the caller's control dependencies
// (Scope::WithoutControlDependencies says why).
ops::Variable ModelVariables::Add(const Scope& caller, std::string_view name, DataType dtype,
                                  std::vector<int64_t> shape, Input initial_value, bool trainable) {
  const Scope scope = caller.WithoutControlDependencies();
  ops::Variable var = ops::MakeVariable(scope, name, dtype, std::move(shape));
  Operation init = ops::Assign(scope.WithOpName(std::string(name) + "/initializer"), var,
                               std::move(initial_value))
                       .op();
  if (var.op().valid()) {
    variables_.push_back(
        {.name = var.op().name(), .var = var, .initializer = init, .trainable = trainable});
  }
  return var;
}

StatusOr<PartitionedVariable> ModelVariables::AddPartitioned(
    const Scope& caller, std::string_view name, DataType dtype, std::vector<int64_t> shape,
    int num_parts, const std::function<Output(const Scope&, std::vector<int64_t>)>& initial_value,
    bool trainable) {
  const Scope scope = caller.WithoutControlDependencies();
  if (shape.empty() || num_parts < 1 || num_parts > shape[0]) {
    Status s = errors::InvalidArgument(
        "partitioned variable '", std::string(name), "': cannot split ",
        shape.empty() ? std::string("a scalar") : "dimension 0 of size " + std::to_string(shape[0]),
        " into ", num_parts, " parts");
    scope.UpdateStatus(s);
    return s;
  }
  PartitionedVariable p{.name = std::string(name), .dtype = dtype, .shape = shape};
  const int64_t base = shape[0] / num_parts, extra = shape[0] % num_parts;
  int64_t offset = 0;
  for (int i = 0; i < num_parts; ++i) {
    std::vector<int64_t> part_shape = shape;
    part_shape[0] = base + (i < extra ? 1 : 0);
    // The part's node takes the name "<name>/part_<i>" (TensorFlow's) before anything
    // else can: its initial value is built afterwards, under "<name>/part_<i>/initial_value".
    // Building the value first in a sub-scope named after the part took that name, and the
    // variable became "<name>/part_<i>_1".
    const std::string part_name = p.name + "/part_" + std::to_string(i);
    ops::Variable part = ops::MakeVariable(scope, part_name, dtype, part_shape);
    TW_RETURN_IF_ERROR(scope.status());
    const Output value = initial_value(scope.NewSubScope(part_name + "/initial_value"), part_shape);
    Operation init = ops::Assign(scope.WithOpName(part_name + "/initializer"), part, value).op();
    TW_RETURN_IF_ERROR(scope.status());
    variables_.push_back(
        {.name = part.op().name(), .var = part, .initializer = init, .trainable = trainable});
    variables_.back().name = p.name;
    variables_.back().full_shape = shape;
    variables_.back().row_offset = offset;
    p.parts.push_back(part);
    p.row_offsets.push_back(offset);
    offset += part_shape[0];
  }
  return p;
}

std::vector<ops::Variable> ModelVariables::trainable() const {
  std::vector<ops::Variable> out;
  for (const ModelVariable& v : variables_) {
    if (v.trainable) out.push_back(v.var);
  }
  return out;
}

Operation ModelVariables::InitOp(const Scope& scope) const {
  std::vector<Operation> inits;
  for (const ModelVariable& v : variables_) inits.push_back(v.initializer);
  return ops::Group(scope, inits);
}

Output ModelVariables::InitializedOp(const Scope& scope) const {
  InputList flags;
  for (const ModelVariable& v : variables_)
    flags.push_back(ops::IsVariableInitialized(scope, v.var));
  if (flags.empty()) return ops::Const(scope, Tensor::FromVector<bool>({}));
  return ops::Pack(scope, flags);
}

Output PartitionedVariable::Value(const Scope& scope) const {
  InputList values;
  for (const ops::Variable& part : parts) values.push_back(ops::ReadVariable(scope, part));
  return ops::Concat(scope, values, 0);
}

Output PartitionedVariable::Lookup(const Scope& scope, Input ids, Strategy strategy) const {
  const Output ids64 = ops::Cast(scope, std::move(ids), DT_INT64);
  const auto num_parts = static_cast<int64_t>(parts.size());
  // Each part gathers the ids it holds (others clipped into range, then masked to zero), so
  // the gradient reaching a part is sparse in that part's rows.
  Output sum;
  for (size_t i = 0; i < parts.size(); ++i) {
    const int64_t rows = parts[i].shape[0];
    // The row in part i each id would have, and whether part i holds it.
    Output local, in_part;
    if (strategy == Strategy::kDiv) {
      local = ops::Sub(scope, ids64, Tensor::Scalar<int64_t>(row_offsets[i]));
    } else {
      local = ops::FloorDiv(scope, ids64, Tensor::Scalar<int64_t>(num_parts));
      in_part = ops::Equal(scope, ops::FloorMod(scope, ids64, Tensor::Scalar<int64_t>(num_parts)),
                           Tensor::Scalar<int64_t>(static_cast<int64_t>(i)));
    }
    Output clipped = ops::Minimum(scope, ops::Maximum(scope, local, Tensor::Scalar<int64_t>(0)),
                                  Tensor::Scalar<int64_t>(rows - 1));
    Output held = ops::Equal(scope, clipped, local);
    if (in_part.op().valid()) held = ops::LogicalAnd(scope, held, in_part);
    // One mask entry per id, over the whole row: [ids..., 1, ...] against the gathered
    // [ids..., row dims...], for ids of any rank.
    for (size_t d = 1; d < shape.size(); ++d) {
      held = ops::ExpandDims(scope, held, Tensor::Scalar<int32_t>(-1));
    }
    Output gathered = ops::ResourceGather(scope, parts[i], clipped);
    Output mine = ops::Select(scope, held, gathered, ops::ZerosLike(scope, gathered));
    sum = i == 0 ? mine : ops::Add(scope, sum, mine);
  }
  return sum;
}

ops::Variable CreateGlobalStep(const Scope& scope, ModelVariables* variables) {
  return variables->Add(scope, "global_step", DT_INT64, {}, Tensor::Scalar<int64_t>(0),
                        /*trainable=*/false);
}

}  // namespace tw::train
