/*
 * pyoffsets.c: the offsets perfscript's CPython table (runtime/symbols/
 * python.c) holds, as the CPython whose headers this is compiled against
 * (-I its include/python3.N, with the internal headers) lays them out;
 * printed as `perfscript --python-layouts` prints the table's row, for
 * tests/e2e/python.sh to compare.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#endif
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#endif

#define F(name, value) printf(" %s=%d", name, (int)(value))

int main(void)
{
	printf("3.%d", PY_MINOR_VERSION);
	F("runtime_head", offsetof(_PyRuntimeState, interpreters.head));
#if PY_VERSION_HEX >= 0x030B0000
	F("interp_threads", offsetof(PyInterpreterState, threads.head));
#else
	F("interp_threads", offsetof(PyInterpreterState, tstate_head));
#endif
	F("ts_next", offsetof(PyThreadState, next));
	F("ts_thread_id", offsetof(PyThreadState, thread_id));
#if PY_VERSION_HEX >= 0x030D0000
	F("ts_frame", offsetof(PyThreadState, current_frame));
	F("cframe_frame", -1);
#elif PY_VERSION_HEX >= 0x030B0000
	F("ts_frame", offsetof(PyThreadState, cframe));
	F("cframe_frame", offsetof(_PyCFrame, current_frame));
#else
	F("ts_frame", offsetof(PyThreadState, frame));
	F("cframe_frame", -1);
#endif
#if PY_VERSION_HEX >= 0x030B0000
	F("f_back", offsetof(_PyInterpreterFrame, previous));
#if PY_VERSION_HEX >= 0x030D0000
	F("f_code", offsetof(_PyInterpreterFrame, f_executable));
	F("f_at", offsetof(_PyInterpreterFrame, instr_ptr));
#else
	F("f_code", offsetof(_PyInterpreterFrame, f_code));
	F("f_at", offsetof(_PyInterpreterFrame, prev_instr));
#endif
#if PY_VERSION_HEX >= 0x030C0000
	F("f_entry", -1);
#else
	F("f_entry", offsetof(_PyInterpreterFrame, is_entry));
#endif
	F("f_owner", offsetof(_PyInterpreterFrame, owner));
	F("at_size", sizeof(void *));
#else
	F("f_back", offsetof(PyFrameObject, f_back));
	F("f_code", offsetof(PyFrameObject, f_code));
	F("f_at", offsetof(PyFrameObject, f_lasti));
	F("f_entry", -1);
	F("f_owner", -1);
	F("at_size", sizeof(((PyFrameObject *)0)->f_lasti));
#endif
	F("co_name", offsetof(PyCodeObject, co_name));
#if PY_VERSION_HEX >= 0x030B0000
	F("co_qualname", offsetof(PyCodeObject, co_qualname));
#else
	F("co_qualname", -1);
#endif
	F("co_filename", offsetof(PyCodeObject, co_filename));
	F("co_firstlineno", offsetof(PyCodeObject, co_firstlineno));
	F("co_linetable", offsetof(PyCodeObject, co_linetable));
#if PY_VERSION_HEX >= 0x030B0000
	F("co_code", offsetof(PyCodeObject, co_code_adaptive));
#else
	F("co_code", offsetof(PyCodeObject, co_code));
#endif
	F("ascii_size", sizeof(PyASCIIObject));
	F("compact_size", sizeof(PyCompactUnicodeObject));
	printf("\n");
	return 0;
}
