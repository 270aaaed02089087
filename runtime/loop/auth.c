/*
 * auth.c: basic-auth passwords checked against a web configuration's
 * bcrypt hashes, on the loop thread, without letting a guessing client
 * starve the real ones or learn which users exist.
 *
 * Bcrypt is slow on purpose (tens of ms), so a password once accepted is
 * remembered (a scraper pays once, and gets in whatever else happens) and
 * new ones are checked at most PS_AUTH_CHECKS_PER_S a second in all, and
 * one a second for each client address. That budget is split: an address
 * with PS_AUTH_SUSPECT_FAILS failed checks in the last minute shares one
 * check a second with every other such address, and the rest is for
 * addresses without; so wrong passwords from one address cannot keep the
 * right one from another out.
 * An unknown user's password is hashed against a known user's hash all the
 * same, so that the time of a reply does not tell which names exist.
 */
#include <crypt.h>
#include <stdlib.h>
#include <string.h>

#include "loop/http.h"

#define CLIENTS	      64	     /* addresses remembered, least recently seen evicted */
#define FAILS_NS      60000000000ull /* failures are counted over a minute */
#define SUSPECT_PER_S 1		     /* checks a second for all suspect addresses */

struct user {
	const char *name, *hash; /* the configuration's */
	char *good;		 /* the last password that matched, or NULL */
};

struct client {
	char addr[64];
	uint64_t seen_ns, checked_ns, failed_ns; /* its last check, its last failure */
	unsigned fails;				 /* in the minute up to failed_ns */
};

struct ps_auth_state {
	struct user *users;
	size_t nusers;
	struct client clients[CLIENTS];
	uint64_t window_ns;
	unsigned used[2]; /* this second's checks: [0] clean addresses, [1] suspect */
	struct crypt_data crypt;
};

#define PS_BCRYPT_MAX_COST 14

bool ps_auth__is_bcrypt(const char *h)
{
	static const char b64[] =
	    "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	/* $2a$ $2b$ $2x$ $2y$, a cost of 04 to PS_BCRYPT_MAX_COST, a
	 * 22-character salt and a 31-character hash: 60 characters in all. A
	 * check runs on the loop thread: cost 14 takes about a second here,
	 * each step up doubles it (cost 20, a minute a request). */
	if (!h || strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("abxy", h[2]) ||
	    h[3] != '$' || h[6] != '$')
		return false;
	if (h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' ||
	    (h[4] - '0') * 10 + (h[5] - '0') < 4 ||
	    (h[4] - '0') * 10 + (h[5] - '0') > PS_BCRYPT_MAX_COST)
		return false;
	for (int i = 7; i < 60; i++)
		if (!strchr(b64, h[i]) || !h[i])
			return false;
	return true;
}

struct ps_auth_state *ps_auth__new(const struct ps_webuser *users, size_t n)
{
	struct ps_auth_state *a = calloc(1, sizeof(*a));

	if (!a || !(a->users = calloc(n ? n : 1, sizeof(*a->users)))) {
		free(a);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		a->users[i] = (struct user){.name = users[i].name, .hash = users[i].hash};
	a->nusers = n;
	return a;
}

static void forget(char **s)
{
	if (*s)
		memset(*s, 0, strlen(*s));
	free(*s);
	*s = NULL;
}

void ps_auth__free(struct ps_auth_state *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nusers; i++)
		forget(&a->users[i].good);
	free(a->users);
	explicit_bzero(&a->crypt, sizeof(a->crypt));
	free(a);
}

/* Equal strings, in a time that depends on their lengths only. */
static bool same(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b);
	unsigned char diff = n != m;

	for (size_t i = 0; i < n && i < m; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}

/* The address's entry, made (in the least recently seen one's place) if new. */
static struct client *client_of(struct ps_auth_state *a, const char *addr, uint64_t now)
{
	struct client *c = &a->clients[0];

	for (size_t i = 0; i < CLIENTS; i++) {
		if (!strcmp(a->clients[i].addr, addr)) {
			c = &a->clients[i];
			goto found;
		}
		if (a->clients[i].seen_ns < c->seen_ns)
			c = &a->clients[i];
	}
	*c = (struct client){0};
	snprintf(c->addr, sizeof(c->addr), "%s", addr);
found:
	c->seen_ns = now;
	if (c->fails && now - c->failed_ns >= FAILS_NS)
		c->fails = 0;
	return c;
}

/* Whether a check may run now for c; counted if so. */
static bool take(struct ps_auth_state *a, struct client *c, uint64_t now)
{
	int suspect = c->fails >= PS_AUTH_SUSPECT_FAILS;
	unsigned limit = suspect ? SUSPECT_PER_S : PS_AUTH_CHECKS_PER_S - SUSPECT_PER_S;

	if (now - a->window_ns >= 1000000000ull) {
		a->window_ns = now;
		a->used[0] = a->used[1] = 0;
	}
	if (a->used[suspect] >= limit || (c->checked_ns && now - c->checked_ns < 1000000000ull))
		return false;
	a->used[suspect]++;
	c->checked_ns = now;
	return true;
}

enum ps_auth ps_auth__check(struct ps_auth_state *a, const char *client, const char *user,
			    const char *password, uint64_t now_ns)
{
	struct user *u = NULL;
	struct client *c;
	const char *h;
	bool match;

	for (size_t i = 0; user && i < a->nusers; i++)
		if (!strcmp(a->users[i].name, user))
			u = &a->users[i];
	if (!password || !a->nusers)
		return PS_AUTH_DENIED;
	if (u && u->good && same(u->good, password))
		return PS_AUTH_OK;
	c = client_of(a, client ? client : "", now_ns);
	if (!take(a, c, now_ns))
		return PS_AUTH_BUSY;
	h = crypt_r(password, u ? u->hash : a->users[0].hash, &a->crypt);
	match = u && h && h[0] != '*' && same(h, u->hash);
	if (!match) {
		c->failed_ns = now_ns;
		c->fails++;
		return PS_AUTH_DENIED;
	}
	forget(&u->good);
	u->good = strdup(password);
	return PS_AUTH_OK;
}
