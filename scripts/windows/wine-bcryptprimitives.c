/*
 * TEST-ONLY stand-in for bcryptprimitives.dll under Wine 8, which lacks it.
 * Rust's std (1.78 and later) imports ProcessPrng from it for its random
 * seeds (HashMap keys); real Windows 10 and later ship the DLL. This one
 * fills the buffer from RtlGenRandom (advapi32 SystemFunction036), which
 * Wine implements. scripts/wine.js builds it with the mingw-w64 compiler
 * into the system32 folder of the Windows test suite's own Wine prefix; it
 * is never shipped or loaded on real Windows.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
  while (size > 0) {
    ULONG chunk = size > 0x10000000 ? 0x10000000 : (ULONG)size;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    size -= chunk;
  }
  return TRUE;
}
