/* Wine 8 has no bcryptprimitives.dll, whose ProcessPrng Rust's standard library on Windows
 * calls for random bytes at start. This stand-in answers through advapi32's RtlGenRandom
 * (SystemFunction036), which Wine has. Built with mingw by the Windows end-to-end test and put
 * beside the .exe files; a real Windows never loads it. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
