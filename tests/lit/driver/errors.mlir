// Bad input: one line with a location, exit code 1, no traceback (pytest checks the line
// count and the exit code exactly: tests/test_driver_errors.py).
// RUN: not linear-layout-opt %S/Inputs/malformed-attribute.mlir 2>&1 | FileCheck %s --check-prefix=ATTR --implicit-check-not=Traceback
// RUN: not linear-layout-opt %S/Inputs/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=OP --implicit-check-not=Traceback
// RUN: not linear-layout-opt %S/Inputs/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not linear-layout-opt %S/Inputs/empty.mlir 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: not linear-layout-opt %S/Inputs/binary.bin 2>&1 | FileCheck %s --check-prefix=BINARY
// RUN: not linear-layout-opt %s -p 'builtin.module(no-such-pass)' 2>&1 | FileCheck %s --check-prefix=PASS
// RUN: not linear-layout-opt %s -p 'builtin.module(cse' 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not linear-layout-opt %s -p 'll-verify{bogus=1}' 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not linear-layout-opt %s -p 'canonicalize{max-iterations=many}' 2>&1 | FileCheck %s --check-prefix=UPSTREAM-OPTION
// RUN: not linear-layout-opt %S/Inputs/wrong-expectation.mlir --verify-diagnostics 2>&1 | FileCheck %s --check-prefix=EXPECT

// ATTR: malformed-attribute.mlir:2:{{[0-9]+}}: error:
// OP: unknown-op.mlir:2:{{[0-9]+}}: error: operation being parsed with an unregistered dialect
// MISSING: error: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// EMPTY: empty.mlir: error: empty input
// BINARY: binary.bin: error: input is binary data, not MLIR text
// PASS: error: unknown pass 'no-such-pass'
// SYNTAX: error: invalid pass pipeline at column 19: expected ')'
// OPTION: error: unknown option 'bogus' for pass 'll-verify' (options: check-launch, max-errors)
// UPSTREAM-OPTION: error: for the --max-iterations option: 'many' value invalid for long argument!; failed to add `canonicalize` with options `max-iterations=many`
// EXPECT: wrong-expectation.mlir:4:{{[0-9]+}}: error: unexpected error: #ttg.blocked has rank 1 but
// EXPECT: wrong-expectation.mlir:4: error: expected error "this is not the message" was not produced
func.func @f() {
  return
}
