/*
 * modifiers.c: the `:ukhp...` part of an event string, with perf's
 * semantics. The first of u/k/h excludes all three privilege levels and each
 * letter lets its own back in (so "uk" excludes only the hypervisor); G and H
 * do the same for guest and host; each p raises precise_ip and P asks for the
 * highest the PMU accepts (the session lowers it at open until the kernel
 * takes it); S makes the leader sample the group's values, D pins, e makes
 * exclusive, W makes a group weak (opened ungrouped when it cannot be opened
 * as one, as perf stat does). Starting from the attr's current values is
 * what makes group modifiers combine with the members' own.
 */
#include <string.h>

#include "event/event.h"

#define MODIFIERS      "ukhHGIpPSDeW"
#define MODIFIERS_LIST "u k h H G I p pp ppp P S D e W"

const char *ps_ev__modifiers_list(void)
{
	return MODIFIERS_LIST;
}

bool ps_ev__looks_like_mods(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!strchr(MODIFIERS, s[i]))
			return false;
	return len > 0;
}

size_t ps_ev__mods_len(const char *s)
{
	size_t n = 0;

	while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
	       (s[n] >= '0' && s[n] <= '9'))
		n++;
	return n;
}

/* Which letters appear (a bit per MODIFIERS position) and how many p's. */
static int scan(const char *s, size_t at, size_t len, unsigned *seen, unsigned *np,
		struct ps_event_error *err)
{
	const char *m = &s[at];

	*seen = *np = 0;
	if (len == 0)
		return ps_ev__fail(err, PS_ERR_SYNTAX, (int)at + 1, "", 0,
				   "missing modifier after ':' at column %d (valid: " MODIFIERS_LIST
				   ")",
				   (int)at + 1);
	for (size_t i = 0; i < len; i++) {
		const char *c = strchr(MODIFIERS, m[i]);
		int column = (int)(at + i) + 1;

		if (!c)
			return ps_ev__fail(
			    err, PS_ERR_SYNTAX, column, &m[i], 1,
			    "unknown modifier '%c' at column %d (valid: " MODIFIERS_LIST ")", m[i],
			    column);
		if (m[i] == 'p')
			(*np)++;
		else if (*seen & 1u << (c - MODIFIERS))
			return ps_ev__fail(err, PS_ERR_SYNTAX, column, &m[i], 1,
					   "duplicate modifier '%c' at column %d", m[i], column);
		*seen |= 1u << (c - MODIFIERS);
	}
	return 0;
}

int ps_ev__apply_mods(const char *s, size_t at, size_t len, struct ps_event *ev,
		      struct ps_event_error *err)
{
	struct perf_event_attr *a = &ev->attr;
	const char *m = &s[at];
	unsigned seen, np;
	int eu = a->exclude_user, ek = a->exclude_kernel, eh = a->exclude_hv;
	int eH = a->exclude_host, eG = a->exclude_guest;
	int exclude = eu | ek | eh, exclude_gh = eG | eH, r;

	if ((r = scan(s, at, len, &seen, &np, err)) < 0)
		return r;
#define HAS(ch) (seen & 1u << (strchr(MODIFIERS, ch) - MODIFIERS))
	if (HAS('P') && (np || a->precise_ip) && !ev->precise_max)
		return ps_ev__fail(err, PS_ERR_SYNTAX, (int)at + 1, m, len,
				   "modifiers '%.*s' at column %d: 'P' (the highest precision the "
				   "PMU offers) and 'p' cannot be combined",
				   (int)len, m, (int)at + 1);
	if (ev->precise_max && np)
		return ps_ev__fail(err, PS_ERR_SYNTAX, (int)at + 1, m, len,
				   "modifiers '%.*s' at column %d: 'p' after 'P' (the highest "
				   "precision the PMU offers) cannot raise it further",
				   (int)len, m, (int)at + 1);
	if (a->precise_ip + np > 3)
		return ps_ev__fail(err, PS_ERR_BAD_VALUE, (int)at + 1, m, len,
				   "too many 'p' modifiers in '%.*s' at column %d (at most ppp)",
				   (int)len, m, (int)at + 1);
	if (HAS('u') || HAS('k') || HAS('h')) {
		if (!exclude)
			eu = ek = eh = 1;
		eu = HAS('u') ? 0 : eu;
		ek = HAS('k') ? 0 : ek;
		eh = HAS('h') ? 0 : eh;
	}
	if (HAS('G') || HAS('H')) {
		if (!exclude_gh)
			eG = eH = 1;
		eG = HAS('G') ? 0 : eG;
		eH = HAS('H') ? 0 : eH;
	}
	a->exclude_user = eu & 1;
	a->exclude_kernel = ek & 1;
	a->exclude_hv = eh & 1;
	a->exclude_guest = eG & 1;
	a->exclude_host = eH & 1;
	a->exclude_idle |= HAS('I') ? 1 : 0;
	a->precise_ip = (a->precise_ip + np) & 3;
	if (HAS('P')) {
		ev->precise_max = true;
		a->precise_ip = 3;
	}
	a->pinned |= HAS('D') ? 1 : 0;
	a->exclusive |= HAS('e') ? 1 : 0;
	ev->sample_read |= HAS('S') != 0;
	if (HAS('W'))
		ev->flags |= PS_EVENT_WEAK_GROUP;
#undef HAS
	return 0;
}
