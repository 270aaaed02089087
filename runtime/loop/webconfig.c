/*
 * webconfig.c: the web configuration file of Prometheus exporters (the
 * exporter-toolkit's --web.config.file), so that a fleet's existing files
 * and habits work for perfscript's listener:
 *
 *   tls_server_config:
 *     cert_file: server.crt
 *     key_file: server.key
 *     min_version: TLS12          (the default; TLS10 to TLS13)
 *     cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ...]
 *   basic_auth_users:
 *     prometheus: $2y$10$...   (a bcrypt hash, as htpasswd -nBC 10 makes)
 *
 * read with libyaml. The reading is strict, because the file decides who
 * may read a root process's profiles: a key this reader does not act on, a
 * key given twice, a user given twice, a hash that is not bcrypt's, a
 * configuration or certificate others may write and a key others may read
 * are refused with one line naming the file and its line, never ignored.
 * An empty file is what the exporter-toolkit makes of it: plain HTTP, no
 * users. Passwords are checked in loop/auth.c; TLS versions and suites
 * become a GnuTLS priority string in loop/webtls.c.
 */
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

struct ps_webconfig {
	char *cert, *key; /* PEM text */
	struct ps_webuser *users;
	size_t nusers;
	struct ps_webtls tls;
	char priorities[1024];
	struct ps_auth_state *auth;
};

enum file_kind { CONFIG, CERT, KEY };

static const char *const kind_names[] = {"web config", "certificate", "key"};

/* Who may change (or, for a key, read) a file a root listener trusts: its
 * owner, if root or us, and nobody else. */
static const char *unsafe(const struct stat *st, enum file_kind kind)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return "is owned by another user";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "is writable by other users (chmod go-w)";
	if (kind == KEY && (st->st_mode & S_IROTH))
		return "is readable by every user (chmod o-r)";
	return NULL;
}

/* A whole regular file of at most MAX_FILE bytes, NUL-terminated. */
static char *slurp(const char *path, enum file_kind kind, char *msg, size_t msglen)
{
	const char *what = kind_names[kind], *why;
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
	if ((why = unsafe(&st, kind))) {
		snprintf(msg, msglen, "the %s %s %s", what, path, why);
		errno = EPERM;
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
	const char *path; /* for messages */
	const char *dir;  /* relative file names start here; NULL: no files read */
	char *msg;
	size_t msglen;
};

static int bad(struct reader *r, const yaml_node_t *n, const char *fmt, const char *arg)
{
	char what[768];

	snprintf(what, sizeof(what), fmt, arg ? arg : "?");
	snprintf(r->msg, r->msglen, "web config %s, line %zu: %s", r->path,
		 n ? n->start_mark.line + 1 : 0, what);
	return -EINVAL;
}

static yaml_node_t *node(struct reader *r, int id)
{
	return yaml_document_get_node(&r->doc, id);
}

static const char *scalar(struct reader *r, int id)
{
	yaml_node_t *n = node(r, id);

	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* The keys of a mapping, each once: -EINVAL naming the second of two. */
static int keys_once(struct reader *r, yaml_node_t *m)
{
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++)
		for (yaml_node_pair_t *q = m->data.mapping.pairs.start; q < p; q++) {
			const char *a = scalar(r, p->key), *b = scalar(r, q->key);

			if (a && b && !strcmp(a, b))
				return bad(r, node(r, p->key), "'%s' is given twice", a);
		}
	return 0;
}

/* A file named in the configuration, relative to the configuration's folder. */
static char *read_named(struct reader *r, const yaml_node_t *n, const char *name,
			enum file_kind kind)
{
	char path[4096 + 256];

	if (!name || !*name) {
		bad(r, n, "a file name is expected here%s", "");
		return NULL;
	}
	if (!r->dir)
		return strdup(name); /* parsing only (the fuzzer): no file is opened */
	snprintf(path, sizeof(path), "%s%s%s", name[0] == '/' ? "" : r->dir,
		 name[0] == '/' ? "" : "/", name);
	return slurp(path, kind, r->msg, r->msglen);
}

/* cipher_suites: a sequence of names, kept for webtls.c. */
static int read_suites(struct reader *r, struct ps_webconfig *w, yaml_node_t *s)
{
	size_t n;

	if (s->type != YAML_SEQUENCE_NODE)
		return bad(r, s, "cipher_suites must be a list of suite names%s", "");
	n = (size_t)(s->data.sequence.items.top - s->data.sequence.items.start);
	if (n > PS_WEBTLS_MAX_SUITES)
		return bad(r, s, "cipher_suites lists more suites than there are%s", "");
	for (size_t i = 0; i < n; i++) {
		const char *v = scalar(r, s->data.sequence.items.start[i]);

		if (!v)
			return bad(r, s, "cipher_suites must be a list of suite names%s", "");
		if (!(w->tls.suites[i] = strdup(v)))
			return -ENOMEM;
		w->tls.nsuites++;
	}
	return 0;
}

static int read_tls(struct reader *r, struct ps_webconfig *w, yaml_node_t *m)
{
	char why[512];
	int rc;

	if (m->type != YAML_MAPPING_NODE)
		return bad(r, m, "tls_server_config must be a mapping (cert_file, key_file)%s", "");
	if ((rc = keys_once(r, m)) < 0)
		return rc;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	     p++) {
		const char *k = scalar(r, p->key), *v = scalar(r, p->value);
		yaml_node_t *vn = node(r, p->value);
		char **slot = NULL;

		if (k && !strcmp(k, "cert_file"))
			slot = &w->cert;
		else if (k && !strcmp(k, "key_file"))
			slot = &w->key;
		else if (k && !strcmp(k, "cipher_suites"))
			rc = read_suites(r, w, vn);
		else if (k && (!strcmp(k, "min_version") || !strcmp(k, "max_version"))) {
			int *ver = k[1] == 'i' ? &w->tls.min : &w->tls.max;

			if ((*ver = ps_webtls__version(v)) < 0)
				rc = bad(r, vn,
					 "a TLS version is TLS10, TLS11, TLS12 or TLS13, not '%s'",
					 v ? v : "(not a word)");
		} else
			rc = bad(r, vn,
				 "tls_server_config: '%s' is not supported (perfscript reads "
				 "cert_file, key_file, min_version, max_version and cipher_suites)",
				 k);
		if (rc < 0)
			return rc;
		if (slot && !(*slot = read_named(r, vn, v, slot == &w->cert ? CERT : KEY)))
			return -EINVAL;
	}
	if (!w->cert != !w->key)
		return bad(r, m, "tls_server_config needs both cert_file and key_file%s", "");
	if (!w->cert)
		return bad(r, m,
			   "tls_server_config needs cert_file and key_file (for plain HTTP, leave "
			   "the section out)%s",
			   "");
	if (ps_webtls__priorities(&w->tls, w->priorities, sizeof(w->priorities), why, sizeof(why)) <
	    0)
		return bad(r, m, "%s", why);
	return 0;
}

static int read_users(struct reader *r, struct ps_webconfig *w, yaml_node_t *m)
{
	size_t n;
	int rc;

	if (m->type != YAML_MAPPING_NODE)
		return bad(r, m, "basic_auth_users must be a mapping of user: bcrypt hash%s", "");
	if ((rc = keys_once(r, m)) < 0)
		return rc;
	n = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
	if (!(w->users = calloc(n ? n : 1, sizeof(*w->users))))
		return -ENOMEM;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
	     p++) {
		const char *k = scalar(r, p->key), *v = scalar(r, p->value);
		struct ps_webuser *u = &w->users[w->nusers];

		if (!k || !*k || strchr(k, ':'))
			return bad(r, node(r, p->key), "a user name must be a word without ':'%s",
				   "");
		if (!ps_auth__is_bcrypt(v))
			return bad(r, node(r, p->value),
				   "the password of '%s' must be a bcrypt hash of cost 4 to 14 "
				   "($2y$10$ and 53 characters; htpasswd -nBC 10 USER makes one)",
				   k);
		if (!(u->name = strdup(k)) || !(u->hash = strdup(v)))
			return -ENOMEM;
		w->nusers++;
	}
	return 0;
}

static int read_root(struct reader *r, struct ps_webconfig *w)
{
	yaml_node_t *root = yaml_document_get_root_node(&r->doc);
	int rc;

	if (!root)
		return 0; /* an empty file: plain HTTP, no users */
	if (root->type != YAML_MAPPING_NODE)
		return bad(r, root, "expected a mapping (tls_server_config, basic_auth_users)%s",
			   "");
	if ((rc = keys_once(r, root)) < 0)
		return rc;
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     !rc && p < root->data.mapping.pairs.top; p++) {
		const char *k = scalar(r, p->key);
		yaml_node_t *v = node(r, p->value);

		if (k && !strcmp(k, "tls_server_config"))
			rc = read_tls(r, w, v);
		else if (k && !strcmp(k, "basic_auth_users"))
			rc = read_users(r, w, v);
		else
			rc = bad(r, node(r, p->key),
				 "'%s' is not supported (perfscript reads tls_server_config and "
				 "basic_auth_users)",
				 k);
	}
	return rc;
}

struct ps_webconfig *ps_webconfig__parse(const char *text, size_t len, const char *path,
					 const char *dir, char *msg, size_t msglen)
{
	struct reader r = {.path = path, .dir = dir, .msg = msg, .msglen = msglen};
	struct ps_webconfig *w = calloc(1, sizeof(*w));
	yaml_parser_t parser;
	int rc;

	if (!w) {
		snprintf(msg, msglen, "out of memory reading %s", path);
		errno = ENOMEM;
		return NULL;
	}
	w->tls.min = w->tls.max = -1;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
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
	if (!rc && w->nusers && !(w->auth = ps_auth__new(w->users, w->nusers)))
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

struct ps_webconfig *ps_webconfig__read(const char *path, char *msg, size_t msglen)
{
	char *text = slurp(path, CONFIG, msg, msglen), *copy = strdup(path);
	struct ps_webconfig *w = NULL;
	int err = ENOMEM;

	if (text && copy)
		w = ps_webconfig__parse(text, strlen(text), path, dirname(copy), msg, msglen);
	else if (!text)
		err = errno;
	if (!w && text && copy)
		err = errno;
	free(text);
	free(copy);
	if (!w)
		errno = err;
	return w;
}

void ps_webconfig__free(struct ps_webconfig *w)
{
	if (!w)
		return;
	ps_auth__free(w->auth);
	for (size_t i = 0; i < w->nusers; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
	}
	for (size_t i = 0; i < w->tls.nsuites; i++)
		free(w->tls.suites[i]);
	if (w->key)
		memset(w->key, 0, strlen(w->key));
	free(w->users);
	free(w->cert);
	free(w->key);
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

const char *ps_webconfig__priorities(const struct ps_webconfig *w)
{
	return w->cert ? w->priorities : NULL;
}

bool ps_webconfig__wants_auth(const struct ps_webconfig *w)
{
	return w->nusers > 0;
}

enum ps_auth ps_webconfig__check(struct ps_webconfig *w, const char *client, const char *user,
				 const char *password, uint64_t now_ns)
{
	return w->auth ? ps_auth__check(w->auth, client, user, password, now_ns) : PS_AUTH_DENIED;
}
