/*
 * pyext.c: a tiny CPython extension for tests/e2e/python.sh, built by the
 * test against each CPython's own headers: pyext.spin(n) burns CPU in a C
 * function of its own (spin_in_c), under the Python frames that called it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

__attribute__((noinline)) static unsigned long spin_in_c(unsigned long n)
{
	volatile unsigned long x = 0;

	for (unsigned long i = 0; i < n; i++)
		x += i ^ (x >> 3);
	return x;
}

static PyObject *spin(PyObject *self, PyObject *arg)
{
	(void)self;
	return PyLong_FromUnsignedLong(spin_in_c(PyLong_AsUnsignedLong(arg)));
}

static PyMethodDef methods[] = {
    {"spin", spin, METH_O, "burn CPU in C"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "pyext", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_pyext(void)
{
	return PyModule_Create(&module);
}
