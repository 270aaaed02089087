/*
 * demangle.c: readable names for mangled symbols. C++ (Itanium ABI)
 * names go through the C++ runtime's own demangler, __cxa_demangle, which
 * gives what c++filt prints (parameters, templates, "[clone .isra.0]").
 * Rust's legacy mangling is Itanium-shaped with a hash as the last path
 * element ("17h0123456789abcdefE") and $...$ escapes inside identifiers:
 * the hash is dropped and the escapes decoded, as rustfilt does, so
 * `_ZN4core3ptr13drop_in_place17h...E` reads `core::ptr::drop_in_place`.
 */
#include <stdlib.h>
#include <string.h>

#include "symbols/internal.h"

/* libstdc++ (libsupc++): the demangler every C++ program links. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

/* A legacy Rust name ends in "17h" + 16 hex digits + "E". */
static bool rust_legacy(const char *name)
{
	size_t n = strlen(name);
	const char *h;

	if (n < 3 + 20 + 1 || strncmp(name, "_ZN", 3) || name[n - 1] != 'E')
		return false;
	h = name + n - 20;
	if (strncmp(h, "17h", 3))
		return false;
	for (int i = 3; i < 19; i++)
		if (!strchr("0123456789abcdef", h[i]))
			return false;
	return true;
}

static const struct {
	const char *esc, *ch;
} rust_escapes[] = {
    {"$SP$", "@"},  {"$BP$", "*"},  {"$RF$", "&"},  {"$LT$", "<"},  {"$GT$", ">"},  {"$LP$", "("},
    {"$RP$", ")"},  {"$C$", ","},   {"$u7e$", "~"}, {"$u20$", " "}, {"$u27$", "'"}, {"$u5b$", "["},
    {"$u5d$", "]"}, {"$u7b$", "{"}, {"$u7d$", "}"}, {"$u3b$", ";"}, {"$u2b$", "+"}, {"$u22$", "\""},
};

/* The character an escape at s stands for, with its length in *len. */
static char rust_escape(const char *s, size_t *len)
{
	for (size_t i = 0; i < sizeof(rust_escapes) / sizeof(rust_escapes[0]); i++) {
		*len = strlen(rust_escapes[i].esc);
		if (!strncmp(s, rust_escapes[i].esc, *len))
			return rust_escapes[i].ch[0];
	}
	return 0;
}

/* Decode the $..$ escapes and ".." (a path separator inside an identifier)
 * of a demangled legacy Rust name in place, and drop its "::h<hash>". */
static void rust_tidy(char *s)
{
	size_t n = strlen(s), len;
	char *r = s, *w = s, ch;

	if (n > 3 + 16 && !strncmp(s + n - 19, "::h", 3))
		s[n - 19] = '\0';
	while (*r) {
		/* a '_' in front of an identifier only shields its leading '$' */
		if (r[0] == '_' && r[1] == '$' && (r == s || r[-1] == ':'))
			r++;
		if (*r == '$' && (ch = rust_escape(r, &len))) {
			*w++ = ch;
			r += len;
		} else if (r[0] == '.' && r[1] == '.') {
			*w++ = ':';
			*w++ = ':';
			r += 2;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

char *ps_demangle(const char *name)
{
	int status = -1;
	char *out;

	if (strncmp(name, "_Z", 2))
		return NULL;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	if (rust_legacy(name))
		rust_tidy(out);
	return out;
}
