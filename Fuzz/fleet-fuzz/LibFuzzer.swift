// The glue to libFuzzer (compiler-rt), linked in by `-sanitize=fuzzer`.
//
// SwiftPM links an executable's own `main` (renamed on Linux, then aliased back), so
// libFuzzer's `main` is never used: ours picks the target and hands control to
// LLVMFuzzerRunDriver, libFuzzer's documented entry point for programs with their own main
// (https://llvm.org/docs/LibFuzzer.html#using-libfuzzer-as-a-library).

/// `int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*cb)(const uint8_t *, size_t))`:
/// parses libFuzzer's flags and corpus folders from `argv`, then runs `callback` on inputs
/// until a crash or a `-max_total_time`/`-runs` limit. Declared by its C symbol name (under a Swift name): its
/// arguments are plain pointers and integers, passed the same way by both conventions.
@_silgen_name("LLVMFuzzerRunDriver")
func runLibFuzzerDriver(
  _ argc: UnsafeMutablePointer<Int32>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// The target `main` chose. Written once, before LLVMFuzzerRunDriver starts; libFuzzer then
/// calls ``fuzzOneInput(_:_:)`` on its one fuzzing thread only, so nothing races on it.
nonisolated(unsafe) var selectedTarget: FuzzTarget?

/// libFuzzer's per-input callback, under the name libFuzzer's own `main` would look for.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
  // Passed on without a copy, so AddressSanitizer sees a read past libFuzzer's exact-sized
  // buffer.
  selectedTarget!.run(UnsafeRawBufferPointer(start: data, count: size))
  return 0
}
