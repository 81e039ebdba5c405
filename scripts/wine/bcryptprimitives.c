/* Wine 8 (Debian 12) lacks bcryptprimitives.dll, whose ProcessPrng every Go
 * program since Go 1.22 loads at start-up on Windows. This stand-in, for
 * the Wine check of the Windows CLI only (scripts/wine-check.sh), answers
 * ProcessPrng with advapi32's RtlGenRandom, which Wine has. Real Windows
 * has its own bcryptprimitives.dll. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size) {
	while (size > 0) {
		ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
		if (!SystemFunction036(data, n)) {
			return FALSE;
		}
		data += n;
		size -= n;
	}
	return TRUE;
}
