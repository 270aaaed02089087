/*
 * utf8.h: strings that leave perfscript (a label, a pprof string table,
 * JSON) are valid UTF-8 whatever the bytes they came from (a process name,
 * a cgroup, a JIT map, a Python name with a lone surrogate), as
 * Prometheus, pprof's readers and JSON parsers require.
 */
#ifndef PS_BASE_UTF8_H
#define PS_BASE_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Whether s[0..n) is valid UTF-8: no stray continuation byte, no overlong
 * form, no surrogate, nothing past U+10FFFF, no sequence cut short. */
bool ps_utf8__valid(const char *s, size_t n);
/* s[0..n) with every byte that does not start a valid sequence replaced by
 * U+FFFD (as Go's strings.ToValidUTF8 does per byte), written to out, which
 * must hold 3 * n bytes; returns the length written. */
size_t ps_utf8__repair(const char *s, size_t n, char *out);

#endif
