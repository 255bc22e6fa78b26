// --mlir-print-ir-after-all prints after every pass, Python ones included (to stderr);
// --mlir-print-op-generic prints the generic form, which parses back.
// RUN: linear-layout-opt %s -p 'builtin.module(cse, ll-verify)' --mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: linear-layout-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC
// RUN: linear-layout-opt %s --mlir-print-op-generic | linear-layout-opt | FileCheck %s --check-prefix=PRETTY

// AFTER: IR Dump After CSE (cse)
// AFTER: IR Dump After LLVerify (ll-verify)
// GENERIC: #blocked = #ttg.blocked<
// GENERIC: "func.func"() <{function_type = (tensor<32xf32, #blocked>) -> ()
// PRETTY: func.func @f(%arg0: tensor<32xf32, #blocked>)
func.func @f(%a: tensor<32xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>) {
  return
}
