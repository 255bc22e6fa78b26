// A test of --verify-diagnostics itself: the message does not match, so the driver reports
// both the unexpected error and the unmet expectation.
// expected-error@+1 {{this is not the message}}
func.func @f(%a: tensor<4x4xf32, #ttg.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]}>>) {
  return
}
