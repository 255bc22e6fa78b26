// ARGS: ["-p", "builtin.module(reconcile-unrealized-casts)", "-p", "builtin.module(ll-lower)", "--emit-ptx", "--ptx-chip=sm_30"]
// FOUND: 'exit status -6' (the NVVM pipeline left a gpu.module of a nested module half-converted; now a one-line error)
// ll-lower{chip=...}: shared-memory conversions of 8/16/32-bit data use ldmatrix (sm_75+) and
// stmatrix (sm_90+) where that reaches the bandwidth floor; the default stays portable.
// ll-explain-conversions{chip=...} says which, and whether the floor is reached (and why not).

// The issue's 64x64 f16 transpose: 2-byte loads without matrix instructions (1.5x the floor).
#row = #ttg.blocked<{sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]}>
#col = #ttg.blocked<{sizePerThread = [4, 1], threadsPerWarp = [8, 4], warpsPerCTA = [1, 4], order = [0, 1]}>
module attributes {"ttg.num-warps" = 4 : i32} {
  func.func @transpose(%in: memref<64x64xf16>, %out: memref<64x64xf16>) {
    %x = "ll.load"(%in) : (memref<64x64xf16>) -> tensor<64x64xf16, #row>
    %t = "ttg.convert_layout"(%x) : (tensor<64x64xf16, #row>) -> tensor<64x64xf16, #col>
    "ll.store"(%t, %out) : (tensor<64x64xf16, #col>, memref<64x64xf16>) -> ()
    return
  }
}

// PORTABLE: ll.explain = "shared: 2048 B scratch, 4 rep(s), 7 barrier(s); store 4 x 16 B (64 wavefronts, ideal 64); load 32 x 2 B (128 wavefronts, ideal 128); {{[0-9]+}} index ops; above the floor 128: load: 2-byte accesses move 64 of 128 bytes per wavefront"
// SM90: ll.explain = "shared (stmatrix.x4.trans): 2048 B scratch, 4 rep(s), 7 barrier(s); 4 x stmatrix.x4.trans (64 wavefronts); load 4 x 16 B (64 wavefronts); floor 128: reached"
// LOWER90: gpu.func @transpose
// LOWER90-COUNT-4: nvvm.stmatrix {{.*}}layout = #nvvm.mma_layout<col>
// LOWER90-NOT: ll.chip
// LOWER80: gpu.func @transpose
// LOWER80-COUNT-4: nvvm.ldmatrix {{.*}}layout = #nvvm.mma_layout<col>{{.*}}num = 4
// LOWER: gpu.func @transpose
// LOWER-NOT: nvvm.
// BAD: bad value 'sm_999' for option 'chip' of pass 'll-lower': unknown chip 'sm_999'; known NVIDIA chips: sm_20

// -----
// Input from a file or stdin, output to stdout or -o; --version and --list-passes.

// CHECK: func.func @f()
// VERSION: linear-layout-opt {{[0-9]+\.[0-9]+}}
// PASSES: ll-verify
// PASSES-NEXT: check-launch=true
func.func @f() {
  return
}
