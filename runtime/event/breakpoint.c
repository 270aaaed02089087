/*
 * breakpoint.c: hardware breakpoints, perf's `mem:ADDR[/LEN][:rwx]`,
 * and `mem:SYMBOL[+OFF][/LEN][:rwx]`. The grammar differs from the other
 * names (a '/' that is not a term list, a ':' that may be an access type
 * rather than modifiers), so the lexer hands anything starting "mem:" here.
 * Defaults follow perf: access rw, and a length of 4 bytes for data or
 * sizeof(long) for execute. Access letters (r w x) and modifiers (u k h ...)
 * share no letter, so "mem:0x10:rw:u" and "mem:0x10:u" read without
 * ambiguity. A symbol is only kept here, with bp_addr 0: its address
 * depends on the target, which the parser does not know, so the session
 * looks it up when the counter opens (core/breakpoint.c).
 */
#include <ctype.h>
#include <string.h>
#include <linux/hw_breakpoint.h>

#include "event/event.h"

#define FORM "mem:ADDR[/LEN][:rwx]"

/* A symbol name: a C identifier, plus the '.' of compiler-made local names
 * (counter.1, foo.part.0). */
static bool is_symbol(const char *s, size_t len)
{
	if (!len || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.')
			return false;
	return true;
}

static bool is_addr_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '.';
}

/* The access letters after ':' when they are one (else *bp_type stays 0). */
static int parse_access(const char *s, size_t at, size_t len, unsigned *bp_type,
			struct ps_event_error *err)
{
	unsigned t = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned bit = s[at + i] == 'r'	  ? HW_BREAKPOINT_R
			       : s[at + i] == 'w' ? HW_BREAKPOINT_W
						  : HW_BREAKPOINT_X;

		if (t & bit)
			return ps_ev__fail(err, PS_ERR_SYNTAX, (int)(at + i) + 1, &s[at + i], 1,
					   "duplicate breakpoint access '%c' at column %d",
					   s[at + i], (int)(at + i) + 1);
		t |= bit;
	}
	/* The kernel has no breakpoint that both executes and reads or writes. */
	if ((t & HW_BREAKPOINT_X) && (t & HW_BREAKPOINT_RW))
		return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)at + 1, &s[at], len,
				   "breakpoint access '%.*s' at column %d: 'x' cannot be combined "
				   "with 'r' or 'w'",
				   (int)len, &s[at], (int)at + 1);
	*bp_type = t;
	return 0;
}

/* The number after the '+' of an offset or the '/' of a length at *p:
 * advances *p past it. 0 or < 0 with err filled. */
static int parse_number(const char *s, size_t *p, uint64_t *v, bool length,
			struct ps_event_error *err)
{
	size_t at = ++*p;

	while (isalnum((unsigned char)s[*p]))
		++*p;
	if (ps_ev__parse_u64(&s[at], *p - at, v) &&
	    (!length || *v == 1 || *v == 2 || *v == 4 || *v == 8))
		return 0;
	return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)at + 1, &s[at], *p - at,
			   "bad breakpoint %s '%.*s' at column %d (%s)",
			   length ? "length" : "offset", (int)(*p - at), &s[at], (int)at + 1,
			   length ? "1, 2, 4 or 8" : "a number after '+'");
}

int ps_ev__parse_breakpoint(const char *s, size_t *pos, struct ps_ev_ref *ref, struct ps_event *ev,
			    struct ps_event_error *err)
{
	struct perf_event_attr *a = &ev->attr;
	size_t start = *pos, p = *pos + 4, at = p;
	int column = (int)start + 1;
	uint64_t addr = 0, len = 0, off = 0;
	bool symbol = false;
	size_t sym_end;
	unsigned type = 0;
	int r;

	while (is_addr_char(s[p]))
		p++;
	if (p == at)
		return ps_ev__fail(err, PS_ERR_SYNTAX, (int)at + 1, "mem:", 4,
				   "breakpoint at column %d needs an address (" FORM ")", column);
	symbol = is_symbol(&s[at], p - at);
	if (!symbol && !ps_ev__parse_u64(&s[at], p - at, &addr))
		return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)at + 1, &s[at], p - at,
				   "breakpoint address '%.*s' at column %d is neither a number nor "
				   "a symbol name (" FORM " or mem:SYMBOL[+OFF])",
				   (int)(p - at), &s[at], (int)at + 1);
	sym_end = p;
	if (symbol && s[p] == '+' && (r = parse_number(s, &p, &off, false, err)) < 0)
		return r;
	*ref = (struct ps_ev_ref){.sys = &s[start],
				  .sys_len = 3,
				  .name = &s[at],
				  .name_len = sym_end - at,
				  .column = column};
	if (s[p] == '/' && isdigit((unsigned char)s[p + 1]) &&
	    (r = parse_number(s, &p, &len, true, err)) < 0)
		return r;
	if (s[p] == ':') {
		size_t q = p + 1;

		while (s[q] == 'r' || s[q] == 'w' || s[q] == 'x')
			q++;
		/* Only a whole word of r/w/x is an access type; "u" or "rk"
		 * are modifiers (and their errors come from there). */
		if (q > p + 1 && !isalnum((unsigned char)s[q])) {
			if ((r = parse_access(s, p + 1, q - p - 1, &type, err)) < 0)
				return r;
			p = q;
		}
	}
	if (!type)
		type = HW_BREAKPOINT_RW;
	if (!len)
		len = type == HW_BREAKPOINT_X ? sizeof(long) : HW_BREAKPOINT_LEN_4;
	a->type = PERF_TYPE_BREAKPOINT;
	a->config = 0;
	a->bp_type = type;
	a->bp_addr = addr;
	a->bp_len = len;
	ref->terms = s[p] == '/';
	/* Last, so that no error above leaves a copy behind. */
	if (symbol) {
		ev->bp_symbol = strndup(&s[at], sym_end - at);
		if (!ev->bp_symbol)
			return ps_ev__nomem(err);
		ev->bp_offset = off;
	}
	*pos = p;
	return 0;
}
