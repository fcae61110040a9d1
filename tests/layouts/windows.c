/* Windows x64 layouts from mingw-w64's headers, for tests/layouts/layouts_test.ts: compiled
 * with `x86_64-w64-mingw32-gcc -S`, each constant lands in the assembly as `.quad N`, so no
 * Windows (or Wine) run is needed to read them. Independent of src/process/windows.ts. */
#include <stddef.h>
#include <windows.h>
#include <tlhelp32.h>

#define LAYOUT(name, value) const unsigned long long layout_##name = (value);

LAYOUT(PROCESSENTRY32W_size, sizeof(PROCESSENTRY32W))
LAYOUT(PROCESSENTRY32W_dwSize, offsetof(PROCESSENTRY32W, dwSize))
LAYOUT(PROCESSENTRY32W_th32ProcessID, offsetof(PROCESSENTRY32W, th32ProcessID))
LAYOUT(PROCESSENTRY32W_th32ParentProcessID, offsetof(PROCESSENTRY32W, th32ParentProcessID))
LAYOUT(PROCESSENTRY32W_szExeFile, offsetof(PROCESSENTRY32W, szExeFile))
LAYOUT(PROCESSENTRY32W_szExeFile_chars, sizeof(((PROCESSENTRY32W *)0)->szExeFile) / sizeof(WCHAR))
LAYOUT(FILETIME_size, sizeof(FILETIME))
LAYOUT(FILETIME_dwLowDateTime, offsetof(FILETIME, dwLowDateTime))
LAYOUT(FILETIME_dwHighDateTime, offsetof(FILETIME, dwHighDateTime))
LAYOUT(PROCESS_QUERY_LIMITED_INFORMATION, PROCESS_QUERY_LIMITED_INFORMATION)
LAYOUT(TH32CS_SNAPPROCESS, TH32CS_SNAPPROCESS)
LAYOUT(STILL_ACTIVE, STILL_ACTIVE)
LAYOUT(INVALID_HANDLE_VALUE, (unsigned long long)(ULONG_PTR)INVALID_HANDLE_VALUE)
