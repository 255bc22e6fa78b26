// Input from a file or stdin, output to stdout or -o; --version and --list-passes.
// RUN: linear-layout-opt < %s | FileCheck %s
// RUN: linear-layout-opt - < %s | FileCheck %s
// RUN: linear-layout-opt %s -o %t && FileCheck %s < %t
// RUN: linear-layout-opt --version | FileCheck %s --check-prefix=VERSION
// RUN: linear-layout-opt --list-passes | FileCheck %s --check-prefix=PASSES

// CHECK: func.func @f()
// VERSION: linear-layout-opt {{[0-9]+\.[0-9]+}}
// PASSES: ll-verify
// PASSES-NEXT: check-launch=true
func.func @f() {
  return
}
