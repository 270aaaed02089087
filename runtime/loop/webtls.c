/*
 * webtls.c: a web configuration's TLS versions and cipher suites, as the
 * exporter-toolkit names them (min_version: TLS12, cipher_suites: Go's
 * suite names), made into the GnuTLS priority string libmicrohttpd takes.
 * The default is Go's: TLS 1.2 and 1.3, and for 1.2 only key exchanges with
 * forward secrecy (ECDHE).
 *
 * GnuTLS enables suites by their parts (key exchanges x ciphers x MACs),
 * and its TLS 1.3 suites share their ciphers with 1.2's, so some lists of
 * suites cannot be had alone. The string made is therefore checked with
 * GnuTLS itself (loaded beside libmicrohttpd, which needs it): a suite
 * listed that it would not enable, or one not listed that it would, is an
 * error naming the suites, never a listener that speaks something else
 * than the file says. TLS 1.3's suites are not configurable, as in Go.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "loop/http.h"

struct suite {
	const char *name; /* Go's */
	unsigned id;	  /* IANA's */
	const char *kx, *cipher, *mac;
};

static const struct suite suites[] = {
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", 0x000a, "RSA", "3DES-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", 0x002f, "RSA", "AES-128-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", 0x0035, "RSA", "AES-256-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", 0x003c, "RSA", "AES-128-CBC", "SHA256"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", 0x009c, "RSA", "AES-128-GCM", "AEAD"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", 0x009d, "RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", 0xc009, "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", 0xc00a, "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", 0xc012, "ECDHE-RSA", "3DES-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", 0xc013, "ECDHE-RSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", 0xc014, "ECDHE-RSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", 0xc023, "ECDHE-ECDSA", "AES-128-CBC", "SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", 0xc027, "ECDHE-RSA", "AES-128-CBC", "SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", 0xc02b, "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", 0xc02c, "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", 0xc02f, "ECDHE-RSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", 0xc030, "ECDHE-RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", 0xcca8, "ECDHE-RSA", "CHACHA20-POLY1305",
     "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", 0xcca9, "ECDHE-ECDSA", "CHACHA20-POLY1305",
     "AEAD"},
    /* Go's older names for the last two */
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", 0xcca8, "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", 0xcca9, "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
};
#define NSUITES (sizeof(suites) / sizeof(suites[0]))

/* TLS 1.3's suites: accepted in a list and, as in Go, not configurable. */
static const char *const tls13[] = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
				    "TLS_CHACHA20_POLY1305_SHA256"};

static const char *const tls13_ciphers[] = {"AES-128-GCM", "AES-256-GCM", "CHACHA20-POLY1305"};

static const char *const versions[] = {"TLS10", "TLS11", "TLS12", "TLS13"};
static const char *const gnutls_versions[] = {"TLS1.0", "TLS1.1", "TLS1.2", "TLS1.3"};

int ps_webtls__version(const char *name)
{
	for (int i = 0; name && i < 4; i++)
		if (!strcmp(name, versions[i]))
			return i;
	return -1;
}

static const struct suite *find(const char *name)
{
	for (size_t i = 0; i < NSUITES; i++)
		if (!strcmp(suites[i].name, name))
			return &suites[i];
	return NULL;
}

static const char *go_name(unsigned id, const char *fallback)
{
	for (size_t i = 0; i < NSUITES; i++)
		if (suites[i].id == id)
			return suites[i].name;
	return fallback;
}

/* ":+PART" appended once per distinct part. */
static void add_part(char *out, size_t outlen, const char *part)
{
	size_t n = strlen(part);

	for (const char *p = strstr(out, ":+"); p; p = strstr(p + 2, ":+"))
		if (!strncmp(p + 2, part, n) && (p[2 + n] == ':' || p[2 + n] == '\0'))
			return;
	snprintf(out + strlen(out), outlen - strlen(out), ":+%s", part);
}

struct gnutls_api {
	int (*priority_init)(void **p, const char *s, const char **err);
	void (*priority_deinit)(void *p);
	int (*suite_index)(void *p, unsigned i, unsigned *idx);
	const char *(*suite_info)(size_t idx, unsigned char id[2], void *kx, void *ci, void *mac,
				  void *ver);
};

static bool load_gnutls(struct gnutls_api *g)
{
	void *lib = dlopen(PS_GNUTLS_SONAME, RTLD_NOW | RTLD_LOCAL);
	void *f[4];
	static const char *const names[] = {"gnutls_priority_init", "gnutls_priority_deinit",
					    "gnutls_priority_get_cipher_suite_index",
					    "gnutls_cipher_suite_info"};

	for (int i = 0; i < 4; i++)
		if (!lib || !(f[i] = dlsym(lib, names[i])))
			return false;
	memcpy(&g->priority_init, &f[0], sizeof(f[0]));
	memcpy(&g->priority_deinit, &f[1], sizeof(f[1]));
	memcpy(&g->suite_index, &f[2], sizeof(f[2]));
	memcpy(&g->suite_info, &f[3], sizeof(f[3]));
	return true; /* the library stays loaded: libmicrohttpd needs it */
}

/* What GnuTLS makes of the string: every TLS <= 1.2 suite it enables must
 * be one asked for, and every one asked for enabled. */
static int check(const char *prio, const bool *asked, bool up_to_13, char *msg, size_t msglen)
{
	struct gnutls_api g;
	bool got[NSUITES] = {false};
	char extra[512] = "";
	void *p = NULL;
	const char *where = NULL;

	if (!load_gnutls(&g))
		return 0; /* libmicrohttpd fails the same string at its start */
	if (g.priority_init(&p, prio, &where) < 0) {
		snprintf(msg, msglen, "GnuTLS refuses the TLS settings (%s)", where ? where : prio);
		return -EINVAL;
	}
	for (unsigned i = 0;; i++) {
		unsigned idx;
		unsigned char id[2];
		int kx, ci, mac, ver, rc = g.suite_index(p, i, &idx);
		const char *name;
		bool mine = false;

		if (rc == -56) /* GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE: the end */
			break;
		if (rc < 0 || !(name = g.suite_info(idx, id, &kx, &ci, &mac, &ver)) ||
		    id[0] == 0x13)
			continue; /* TLS 1.3's own */
		for (size_t s = 0; s < NSUITES; s++)
			if (suites[s].id == (unsigned)(id[0] << 8 | id[1]) && asked[s])
				mine = got[s] = true;
		if (!mine)
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "%s%s",
				 *extra ? ", " : "", go_name((unsigned)(id[0] << 8 | id[1]), name));
	}
	g.priority_deinit(p);
	if (*extra) {
		snprintf(msg, msglen,
			 "cipher_suites: GnuTLS enables suites by their parts, and these also "
			 "enable %s: list them too%s",
			 extra,
			 up_to_13 ? ", or set max_version: TLS12 (TLS 1.3 shares the GCM and "
				    "ChaCha20 ciphers)"
				  : "");
		return -EINVAL;
	}
	for (size_t s = 0; s < NSUITES; s++)
		if (asked[s] && !got[s]) {
			snprintf(msg, msglen, "cipher_suites: %s is not available here",
				 suites[s].name);
			return -EINVAL;
		}
	return 0;
}

int ps_webtls__priorities(const struct ps_webtls *t, char *out, size_t outlen, char *msg,
			  size_t msglen)
{
	int min = t->min >= 0 ? t->min : 2, max = t->max >= 0 ? t->max : 3;
	bool asked[NSUITES] = {false}, any = false;

	if (min > max) {
		snprintf(msg, msglen, "min_version %s is above max_version %s", versions[min],
			 versions[max]);
		return -EINVAL;
	}
	snprintf(out, outlen, "NORMAL:-VERS-ALL");
	for (int v = max; v >= min; v--)
		snprintf(out + strlen(out), outlen - strlen(out), ":+VERS-%s", gnutls_versions[v]);
	for (size_t i = 0; i < t->nsuites; i++) {
		const struct suite *s = find(t->suites[i]);
		bool is13 = false;

		for (size_t j = 0; j < 3; j++)
			is13 |= !strcmp(t->suites[i], tls13[j]);
		if (is13)
			continue;
		if (!s) {
			snprintf(msg, msglen,
				 "cipher_suites: '%s' is not a suite perfscript knows (Go's names, "
				 "as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)",
				 t->suites[i]);
			return -EINVAL;
		}
		asked[s - suites] = any = true;
	}
	if (!any) { /* Go's defaults: forward secrecy for 1.2 */
		snprintf(out + strlen(out), outlen - strlen(out), ":-RSA:-DHE-RSA:-DHE-DSS");
		return 0;
	}
	snprintf(out + strlen(out), outlen - strlen(out), ":-KX-ALL");
	for (size_t s = 0; s < NSUITES; s++)
		if (asked[s])
			add_part(out, outlen, suites[s].kx);
	snprintf(out + strlen(out), outlen - strlen(out), ":-CIPHER-ALL");
	for (size_t s = 0; s < NSUITES; s++)
		if (asked[s])
			add_part(out, outlen, suites[s].cipher);
	if (max == 3) /* TLS 1.3's ciphers */
		for (int i = 0; i < 3; i++)
			add_part(out, outlen, tls13_ciphers[i]);
	snprintf(out + strlen(out), outlen - strlen(out), ":-MAC-ALL");
	for (size_t s = 0; s < NSUITES; s++)
		if (asked[s])
			add_part(out, outlen, suites[s].mac);
	if (max == 3)
		add_part(out, outlen, "AEAD");
	return check(out, asked, max == 3, msg, msglen);
}
