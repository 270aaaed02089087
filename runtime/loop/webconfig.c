/*
 * webconfig.c: the web configuration file of Prometheus exporters (the
 * exporter-toolkit's --web.config.file), so that a fleet's existing files
 * and habits work for perfscript's listener:
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *   basic_auth_users:
 *     prometheus: $2y$10$...   (a bcrypt hash, as htpasswd -nBC 10 makes)
 *
 * read with libyaml, passwords checked with libcrypt's bcrypt. A key this
 * reader does not act on is refused with its line, never ignored: a user
 * who asked for client certificates must not get a listener without them.
 * Bcrypt is slow on purpose (tens of ms), and requests are answered on the
 * loop thread, so a password once accepted is remembered (a scraper pays
 * once) and new ones are checked at most PS_AUTH_CHECKS_PER_S a second.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <yaml.h>

#include "loop/http.h"

#define MAX_FILE (1u << 20) /* a configuration, a certificate chain or a key */

struct user {
	char *name, *hash;
	char *good; /* the last password that matched, or NULL */
};

struct ps_webconfig {
	char *cert, *key; /* PEM text */
	struct user *users;
	size_t nusers;
	uint64_t window_ns; /* the second new passwords are being counted in */
	unsigned checks;
	struct crypt_data *crypt;
};

/* A whole regular file of at most MAX_FILE bytes, NUL-terminated. */
static char *slurp(const char *path, char *msg, size_t msglen, const char *what)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	ssize_t n = 0;
	int err;

	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(msg, msglen, "cannot read the %s %s: %s", what, path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_FILE) {
		snprintf(msg, msglen, "the %s %s is not a regular file of at most 1 MiB", what,
			 path);
		errno = EINVAL;
		goto fail;
	}
	if (!(buf = malloc((size_t)st.st_size + 1)))
		goto fail;
	while (n < st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - (size_t)n);

		if (r <= 0) {
			snprintf(msg, msglen, "cannot read the %s %s: %s", what, path,
				 r ? strerror(errno) : "it shrank while read");
			errno = r ? errno : EIO;
			goto fail;
		}
		n += r;
	}
	buf[n] = '\0';
	close(fd);
	return buf;
fail:
	err = errno;
	free(buf);
	if (fd >= 0)
		close(fd);
	errno = err;
	return NULL;
}

struct reader {
	yaml_document_t doc;
	const char *path;
	char dir[4096];
	char *msg;
	size_t msglen;
};

static int bad(struct reader *r, const yaml_node_t *n, const char *what)
{
	snprintf(r->msg, r->msglen, "web config %s, line %zu: %s", r->path,
		 n ? n->start_mark.line + 1 : 0, what);
	return -EINVAL;
}

static const char *scalar(struct reader *r, int id)
{
	yaml_node_t *n = yaml_document_get_node(&r->doc, id);

	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A file named in the configuration, relative to the configuration's folder. */
static char *read_named(struct reader *r, const yaml_node_t *n, const char *name, const char *what)
{
	char path[4096 + 256];

	if (!name || !*name) {
		bad(r, n, "a file name is expected here");
		return NULL;
	}
	snprintf(path, sizeof(path), "%s%s%s", name[0] == '/' ? "" : r->dir,
		 name[0] == '/' ? "" : "/", name);
	return slurp(path, r->msg, r->msglen, what);
}

static int read_tls(struct reader *r, struct ps_webconfig *w, yaml_node_t *m)
{
	if (m->type != YAML_MAPPING_NODE)
		return bad(r, m, "tls_server_config must be a mapping (cert_file, key_file)");
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	     p++) {
		const char *k = scalar(r, p->key), *v = scalar(r, p->value);
		yaml_node_t *vn = yaml_document_get_node(&r->doc, p->value);
		char **slot = k && !strcmp(k, "cert_file")  ? &w->cert
			      : k && !strcmp(k, "key_file") ? &w->key
							    : NULL;

		if (!slot) {
			char why[256];

			snprintf(why, sizeof(why),
				 "tls_server_config: '%s' is not supported (perfscript reads "
				 "cert_file and key_file)",
				 k ? k : "?");
			return bad(r, vn, why);
		}
		free(*slot);
		if (!(*slot =
			  read_named(r, vn, v, !strcmp(k, "cert_file") ? "certificate" : "key")))
			return -EINVAL;
	}
	if (!w->cert != !w->key)
		return bad(r, m, "tls_server_config needs both cert_file and key_file");
	return 0;
}

static int read_users(struct reader *r, struct ps_webconfig *w, yaml_node_t *m)
{
	size_t n;

	if (m->type != YAML_MAPPING_NODE)
		return bad(r, m, "basic_auth_users must be a mapping of user: bcrypt hash");
	n = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
	if (!(w->users = calloc(n ? n : 1, sizeof(*w->users))))
		return -ENOMEM;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	     p++) {
		const char *k = scalar(r, p->key), *v = scalar(r, p->value);
		struct user *u = &w->users[w->nusers];

		if (!k || !*k || strchr(k, ':'))
			return bad(r, yaml_document_get_node(&r->doc, p->key),
				   "a user name must be a word without ':'");
		if (!v || strncmp(v, "$2", 2) != 0 || strlen(v) < 59)
			return bad(r, yaml_document_get_node(&r->doc, p->value),
				   "a password must be a bcrypt hash ($2y$...; htpasswd -nBC 10 "
				   "USER makes one)");
		if (!(u->name = strdup(k)) || !(u->hash = strdup(v)))
			return -ENOMEM;
		w->nusers++;
	}
	return 0;
}

static int read_root(struct reader *r, struct ps_webconfig *w)
{
	yaml_node_t *root = yaml_document_get_root_node(&r->doc);
	int rc = 0;

	if (!root)
		return 0; /* an empty file: plain HTTP, no users */
	if (root->type != YAML_MAPPING_NODE)
		return bad(r, root, "expected a mapping (tls_server_config, basic_auth_users)");
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     !rc && p < root->data.mapping.pairs.top; p++) {
		const char *k = scalar(r, p->key);
		yaml_node_t *v = yaml_document_get_node(&r->doc, p->value);

		if (k && !strcmp(k, "tls_server_config"))
			rc = read_tls(r, w, v);
		else if (k && !strcmp(k, "basic_auth_users"))
			rc = read_users(r, w, v);
		else {
			char why[256];

			snprintf(why, sizeof(why),
				 "'%s' is not supported (perfscript reads tls_server_config and "
				 "basic_auth_users)",
				 k ? k : "?");
			rc = bad(r, yaml_document_get_node(&r->doc, p->key), why);
		}
	}
	return rc;
}

struct ps_webconfig *ps_webconfig__read(const char *path, char *msg, size_t msglen)
{
	struct reader r = {.path = path, .msg = msg, .msglen = msglen};
	struct ps_webconfig *w = calloc(1, sizeof(*w));
	yaml_parser_t parser;
	char *text = slurp(path, msg, msglen, "web config"), *copy;
	int rc = -ENOMEM;

	if (!text || !w) {
		rc = text ? -ENOMEM : -errno;
		free(text);
		free(w);
		errno = -rc;
		return NULL;
	}
	if ((copy = strdup(path))) {
		snprintf(r.dir, sizeof(r.dir), "%s", dirname(copy));
		free(copy);
	}
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
	if (!yaml_parser_load(&parser, &r.doc)) {
		snprintf(msg, msglen, "web config %s, line %zu: %s", path,
			 parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "not YAML");
		rc = -EINVAL;
	} else {
		rc = read_root(&r, w);
		yaml_document_delete(&r.doc);
	}
	yaml_parser_delete(&parser);
	free(text);
	if (!rc && w->nusers && !(w->crypt = calloc(1, sizeof(*w->crypt))))
		rc = -ENOMEM;
	if (rc < 0) {
		if (rc == -ENOMEM)
			snprintf(msg, msglen, "out of memory reading %s", path);
		ps_webconfig__free(w);
		errno = -rc;
		return NULL;
	}
	return w;
}

void ps_webconfig__free(struct ps_webconfig *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nusers; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
		if (w->users[i].good)
			memset(w->users[i].good, 0, strlen(w->users[i].good));
		free(w->users[i].good);
	}
	if (w->key)
		memset(w->key, 0, strlen(w->key));
	free(w->users);
	free(w->cert);
	free(w->key);
	free(w->crypt);
	free(w);
}

const char *ps_webconfig__cert(const struct ps_webconfig *w)
{
	return w->cert;
}

const char *ps_webconfig__key(const struct ps_webconfig *w)
{
	return w->key;
}

bool ps_webconfig__wants_auth(const struct ps_webconfig *w)
{
	return w->nusers > 0;
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

enum ps_auth ps_webconfig__check(struct ps_webconfig *w, const char *user, const char *password,
				 uint64_t now_ns)
{
	struct user *u = NULL;
	const char *h;

	for (size_t i = 0; user && i < w->nusers; i++)
		if (!strcmp(w->users[i].name, user))
			u = &w->users[i];
	if (!u || !password)
		return PS_AUTH_DENIED;
	if (u->good && same(u->good, password))
		return PS_AUTH_OK;
	if (now_ns - w->window_ns >= 1000000000ull) {
		w->window_ns = now_ns;
		w->checks = 0;
	}
	if (w->checks++ >= PS_AUTH_CHECKS_PER_S)
		return PS_AUTH_BUSY;
	h = crypt_r(password, u->hash, w->crypt);
	if (!h || h[0] == '*' || !same(h, u->hash))
		return PS_AUTH_DENIED;
	if (u->good)
		memset(u->good, 0, strlen(u->good));
	free(u->good);
	u->good = strdup(password);
	return PS_AUTH_OK;
}
