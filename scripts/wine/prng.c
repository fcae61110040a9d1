/* bcryptprimitives.dll for Wine 8.0, which has none: Deno (through Rust's std) imports
 * ProcessPrng from it. This one fills the buffer with advapi32's RtlGenRandom
 * (SystemFunction036). Built by scripts/wine/setup.sh; never shipped. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len > 0) {
    ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    len -= chunk;
  }
  return TRUE;
}
