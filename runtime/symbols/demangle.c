/*
 * demangle.c: readable names for mangled symbols, from GNU libiberty's
 * demangler (the one c++filt and the binutils use): C++ (Itanium ABI) as
 * c++filt prints it, parameters and templates included; Rust's legacy
 * mangling with its hash dropped and its $...$ escapes decoded
 * (core::ptr::drop_in_place); and Rust's v0 mangling (_R..., rustc's
 * default for std since 1.80: <std::time::Instant>::elapsed,
 * std::rt::lang_start_internal).
 */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "symbols/internal.h"

char *ps_demangle(const char *name)
{
	if (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2))
		return NULL; /* neither C++ nor Rust: nothing to ask */
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
