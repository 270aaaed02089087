/*
 * main.c: the perfscript command line. It parses options, builds the target
 * (self, -c command, -p pid, -a/-C CPUs), and hands the script to the Lua
 * runtime; --describe answers without opening anything.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/array.h"
#include "base/advice.h"
#include "base/path.h"
#include "cli/repl.h"

static const char usage[] =
    "usage: perfscript [options] SCRIPT.lua [options] [script args] [-- script args]\n"
    "       perfscript -e 'lua code' [options]\n"
    "       perfscript -i [options]           interactive: Lua at a prompt\n"
    "       perfscript --describe [--json] 'EVENT-SPEC'\n"
    "       perfscript -l [--json] [GLOB]     list the events this machine can name\n"
    "\n"
    "  -e CODE         run CODE instead of a script file\n"
    "  -c 'CMD args'   run CMD as the target; counters follow it from exec, with\n"
    "                  its children; the session ends when it exits\n"
    "  -p PID          attach to a running process (all its threads)\n"
    "  -a              count system-wide, on every CPU\n"
    "  -C LIST         count on these CPUs only, e.g. 0-3,5\n"
    "  -T SECONDS      end the session after SECONDS\n"
    "  -b PAGES        data pages per sample ring buffer (power of 2; default 256)\n"
    "  -I DIR          add DIR to the tapset search path\n"
    "  -o FILE         write script output to FILE\n"
    "  -v              verbose: say what the session does\n"
    "  -l [GLOB]       list events (hardware, cache, software, tracepoints, sysfs\n"
    "                  PMUs, libpfm4), those matching GLOB (e.g. 'sched:*') only\n"
    "      --backend=auto|bpf|perf  how sampling counters deliver overflows: BPF\n"
    "                        programs in the kernel or the perf ring (default auto)\n"
    "      --no-demangle     show C++ and Rust names as the symbol tables spell them\n"
    "      --describe SPEC   print the perf_event_attr fields SPEC sets\n"
    "      --json            with --describe or -l: a JSON array\n"
    "      --version         print the version\n"
    "  -h, --help            this text\n"
    "\n"
    "Docs: docs/guide.md, docs/events.md, docs/api.md; man perfscript.\n";

struct options {
	const char *code, *command, *cpus, *output;
	const char *includes[32];
	int nincludes;
	pid_t pid;
	bool system_wide, json, describe, repl, raw_names;
	int verbose;
	double duration;
	long ring_pages;
	enum ps_backend backend;
	bool list; /* -l */
};

static int die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "perfscript: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(perfscript --help lists the options)\n");
	return 2;
}

/* Split "cmd a 'b c'" into argv. Strings with shell syntax run under
 * /bin/sh -c instead, so that pipes and redirections mean what they say. */
static char **command_argv(const char *cmd)
{
	size_t n = 0, cap = 8;
	char **argv = calloc(cap, sizeof(*argv));
	char *buf = malloc(strlen(cmd) + sizeof("/bin/sh")), *out = buf;
	const char *p = cmd;

	if (!argv || !buf)
		goto oom;
	if (strpbrk(cmd, "|&;<>()$`\\*?[]{}~#=\n")) {
		argv[0] = strcpy(buf, "/bin/sh"); /* argv[0] always owns buf */
		argv[1] = "-c";
		argv[2] = (char *)cmd;
		return argv;
	}
	while (*p) {
		char quote = 0;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (ps_array__reserve(&argv, &cap, n + 2, sizeof(*argv)))
			goto oom;
		argv[n++] = out;
		for (; *p && (quote || (*p != ' ' && *p != '\t')); p++) {
			if (!quote && (*p == '\'' || *p == '"'))
				quote = *p;
			else if (quote && *p == quote)
				quote = 0;
			else
				*out++ = *p;
		}
		*out++ = '\0';
	}
	argv[n] = NULL;
	if (n == 0) {
		free(buf);
		free(argv);
		errno = EINVAL;
		return NULL;
	}
	return argv;
oom:
	free(buf);
	free(argv);
	errno = ENOMEM;
	return NULL;
}

/* Print a parse error with a caret under the offending token. */
static void print_event_error(const char *spec, const struct ps_event_error *err)
{
	fprintf(stderr, "perfscript: %s\n", err->message);
	if (err->column > 0) {
		size_t len = strlen(err->token);

		fprintf(stderr, "  %s\n  %*s^", spec, err->column - 1, "");
		for (size_t i = 1; i < len; i++)
			fputc('~', stderr);
		fputc('\n', stderr);
	}
}

static int describe(const char *spec, bool json)
{
	struct ps_event_error err = {0};
	struct ps_events *evs = ps_events__parse(spec, &err);
	int rc;

	if (!evs) {
		print_event_error(spec, &err);
		return 1;
	}
	rc = ps_events__describe(evs, stdout, json);
	ps_events__free(evs);
	return rc < 0 ? 1 : 0;
}

/* -l [GLOB]: the events this machine can name, as text or JSON. */
static int list_events(const char *glob, bool json)
{
	struct ps_event_list *l = ps_event_list__new(glob);
	int rc;

	if (!l) {
		fprintf(stderr, "perfscript: cannot list events: %s\n", strerror(errno));
		return 1;
	}
	rc = ps_event_list__print(l, stdout, json);
	if (!json && glob && ps_event_list__count(l) == 0)
		fprintf(stderr, "perfscript: no event matches '%s'\n", glob);
	ps_event_list__free(l);
	return rc < 0 ? 1 : 0;
}

/* Options with a value, and flags, as getopt's string spells them. */
static const char short_opts[] = "+e:c:p:aC:T:I:o:b:vhli";

/* Whether arg is one of our options; *takes_next when its value is the next
 * argument. A cluster like -av or -T5 counts. */
static bool is_our_option(const char *arg, bool *takes_next)
{
	static const char *const longs[] = {"--describe", "--json", "--version", "--help",
					    "--no-demangle"};

	*takes_next = false;
	if (arg[0] != '-' || !arg[1])
		return false;
	if (arg[1] == '-') {
		if (!strncmp(arg, "--backend", 9) && (arg[9] == '=' || !arg[9])) {
			*takes_next = !arg[9];
			return true;
		}
		for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
			if (!strcmp(arg, longs[i]))
				return true;
		return false;
	}
	for (const char *c = arg + 1; *c; c++) {
		const char *o = strchr(short_opts + 1, *c);

		if (!o || *c == ':')
			return false;
		if (o[1] == ':') {
			*takes_next = c[1] == '\0';
			return true;
		}
	}
	return true;
}

/* Reorder argv as [argv0, our options..., "--", script, script args...]:
 * our options may come before or after the script name (perfscript s.lua
 * -c ./app), while anything after the script that is not ours, and all
 * after "--", belongs to the script (profile.lua --folded out.txt). */
static char **split_args(int argc, char **argv, int *outc, const char **missing)
{
	char **opts = calloc((size_t)argc + 2, sizeof(*opts)),
	     **pos = calloc((size_t)argc + 1, sizeof(*pos));
	int no = 0, np = 0;
	bool dashdash = false;

	if (!opts || !pos) {
		free(opts);
		free(pos);
		return NULL;
	}
	opts[no++] = argv[0];
	for (int i = 1; i < argc; i++) {
		bool next;

		if (dashdash) {
			pos[np++] = argv[i];
		} else if (!strcmp(argv[i], "--")) {
			dashdash = true;
		} else if ((np == 0 && argv[i][0] == '-' && argv[i][1]) ||
			   is_our_option(argv[i], &next)) {
			/* Before the script every option is ours, so getopt reports
			 * the unknown ones. */
			is_our_option(argv[i], &next);
			opts[no++] = argv[i];
			if (next && i + 1 < argc)
				opts[no++] = argv[++i];
			else if (next && !*missing)
				*missing = argv[i]; /* getopt would take our "--" for it */
		} else {
			pos[np++] = argv[i];
		}
	}
	opts[no++] = "--";
	memcpy(opts + no, pos, (size_t)np * sizeof(*pos));
	free(pos);
	*outc = no + np;
	return opts;
}

/* An option whose value must be checked: 0, or the usage error's status. */
static int checked_option(int c, const char *arg, struct options *o)
{
	char *end;

	switch (c) {
	case 'p':
		errno = 0;
		o->pid = (pid_t)strtol(arg, &end, 10);
		if (errno || *end || o->pid <= 0)
			return die_usage("-p wants a process id, got '%s'", arg);
		return 0;
	case 'T':
		/* the timer counts nanoseconds in 64 bits: keep well inside */
		o->duration = strtod(arg, &end);
		if (end == arg || *end || !(o->duration >= 1e-9 && o->duration <= 1e9))
			return die_usage("-T wants a number of seconds from 1e-9 to 1e9 "
					 "(e.g. 2.5), got '%s'",
					 arg);
		return 0;
	case 'b':
		errno = 0;
		o->ring_pages = strtol(arg, &end, 10);
		if (errno || end == arg || *end || o->ring_pages <= 0 ||
		    o->ring_pages > (long)PS_RING_PAGES_MAX ||
		    (o->ring_pages & (o->ring_pages - 1)))
			return die_usage("-b wants a power of two of pages from 1 to 1048576 "
					 "(4 GiB), e.g. 1024; got '%s'",
					 arg);
		return 0;
	case 'I':
		if (o->nincludes == 32)
			return die_usage("too many -I directories (at most %s)", "32");
		o->includes[o->nincludes++] = arg;
		return 0;
	case 'B':
		if (!strcmp(arg, "auto"))
			o->backend = PS_BACKEND_AUTO;
		else if (!strcmp(arg, "bpf"))
			o->backend = PS_BACKEND_BPF;
		else if (!strcmp(arg, "perf"))
			o->backend = PS_BACKEND_PERF;
		else
			return die_usage("--backend wants auto, bpf or perf, got '%s'", arg);
		return 0;
	}
	return 2;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {
	    {"describe", no_argument, NULL, 'D'},
	    {"json", no_argument, NULL, 'J'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {"backend", required_argument, NULL, 'B'},
	    {"no-demangle", no_argument, NULL, 'N'},
	    {NULL, 0, NULL, 0},
	};
	int c, rc;

	while ((c = getopt_long(argc, argv, short_opts, longs, NULL)) != -1) {
		switch (c) {
		case 'e':
			o->code = optarg;
			break;
		case 'c':
			o->command = optarg;
			break;
		case 'a':
			o->system_wide = true;
			break;
		case 'C':
			o->cpus = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'v':
			o->verbose++;
			break;
		case 'D':
			o->describe = true;
			break;
		case 'J':
			o->json = true;
			break;
		case 'l':
			o->list = true;
			break;
		case 'i':
			o->repl = true;
			break;
		case 'V':
			printf("perfscript %s (Lua 5.4)\n", PS_VERSION);
			exit(0);
		case 'h':
			fputs(usage, stdout);
			exit(0);
		case 'N':
			o->raw_names = true;
			break;
		default:
			if ((rc = checked_option(c, optarg, o)))
				return rc;
		}
	}
	if (o->pid && (o->command || o->system_wide || o->cpus))
		return die_usage("%s", "-p cannot be combined with -c, -a or -C");
	return 0;
}

/* Why file (argv[0] of -c) cannot be run, or NULL when it can: checked
 * before anything runs, so a typo costs no begin probes, and said in words
 * a user can act on (execvp's errno would call a directory "permission
 * denied" and a script with a missing #! interpreter "no such file"). */
static const char *command_problem(const char *file, char *why, size_t len)
{
	char buf[4096], line[256];
	struct stat st;
	FILE *f;

	if (ps_path__find_exec(file, buf, sizeof(buf)) < 0) {
		if (!strchr(file, '/'))
			return snprintf(why, len, "'%s': not found in PATH", file), why;
		if (stat(file, &st) < 0)
			return snprintf(why, len, "'%s': no such file", file), why;
		if (S_ISDIR(st.st_mode))
			return snprintf(why, len, "'%s' is a directory", file), why;
		return snprintf(why, len, "'%s' is not executable (chmod +x %s?)", file, file), why;
	}
	f = fopen(buf, "re");
	if (f && fgets(line, sizeof(line), f) && !strncmp(line, "#!", 2)) {
		char *interp = line + 2 + strspn(line + 2, " \t");

		interp[strcspn(interp, " \t\n")] = '\0';
		if (*interp && access(interp, X_OK) != 0) {
			fclose(f);
			return snprintf(why, len, "'%s' asks for the interpreter '%s', which is %s",
					file, interp,
					access(interp, F_OK) ? "not there" : "not executable"),
			       why;
		}
	}
	if (f)
		fclose(f);
	return NULL;
}

static struct ps_session *make_session(const struct options *o)
{
	struct ps_target_opts t = {.sz = sizeof(t), .kind = PS_TARGET_SELF};
	char **cmd = NULL;
	struct ps_session *s;

	if (o->command) {
		cmd = command_argv(o->command);
		if (!cmd) {
			fprintf(stderr, "perfscript: -c wants a command, got '%s'\n", o->command);
			return NULL;
		}
		char why[512];

		if (command_problem(cmd[0], why, sizeof(why))) {
			fprintf(stderr, "perfscript: cannot run the command: %s\n", why);
			free(cmd[0]);
			free(cmd);
			return NULL;
		}
		t.kind = PS_TARGET_COMMAND;
		t.argv = cmd;
	}
	if (o->pid) {
		t.kind = PS_TARGET_PID;
		t.pid = o->pid;
	}
	if (o->system_wide || o->cpus) {
		t.kind = PS_TARGET_CPUS;
		t.cpus = o->cpus;
	}
	s = ps_session__new(&t);
	if (!s) {
		int err = errno;

		if (err == ESRCH)
			fprintf(stderr, "perfscript: -p %d: no such process\n", (int)o->pid);
		else if (err == EINVAL && o->cpus)
			fprintf(stderr,
				"perfscript: -C '%s': not a list of online CPUs "
				"(e.g. 0-1; see /sys/devices/system/cpu/online)\n",
				o->cpus);
		else
			fprintf(stderr, "perfscript: cannot set up the target: %s\n",
				strerror(err));
	}
	if (cmd)
		free(cmd[0]);
	free(cmd);
	return s;
}

/* Where the script's output goes, for messages. */
static const char *output_name = "standard output";

/* Whether a and b name the same existing file. */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

/* -o FILE becomes standard output (after the command was forked: its output
 * stays where it was). 0, or 1 with the reason printed. */
static int redirect_output(const char *path, const char *script)
{
	int fd;

	if (script && same_file(path, script)) {
		fprintf(stderr,
			"perfscript: -o %s is the script itself: refusing to overwrite it\n", path);
		return 1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (fd != STDOUT_FILENO && dup2(fd, STDOUT_FILENO) < 0)) {
		fprintf(stderr, "perfscript: -o %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	if (fd != STDOUT_FILENO)
		close(fd);
	output_name = path;
	return 0;
}

/* The first error writing the script's output (see watch_output). */
static int output_errno;

static ssize_t output_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;

	(void)cookie;
	while (done < len) {
		ssize_t n = write(STDOUT_FILENO, buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!output_errno)
				output_errno = n < 0 ? errno : EIO;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

/* The script writes through stdio (print, io.write, printf), which forgets
 * why a write failed; this stdout keeps the first errno so the end of the
 * run can say it (ENOSPC, EPIPE, ...). Not for the REPL: its line editor
 * wants stdout's file descriptor. */
static void watch_output(void)
{
	cookie_io_functions_t io = {.write = output_write};
	FILE *f = fopencookie(NULL, "w", io);

	if (!f)
		return;
	setvbuf(f, NULL, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF, BUFSIZ);
	fflush(stdout);
	stdout = f;
}

/* Output that could not be written is an error, not a silent exit 0 (a
 * full disk, -o /dev/full): flush, then check the stream and its close. */
static int finish_output(int rc)
{
	int bad = fflush(stdout) != 0 || ferror(stdout) ? (output_errno ? output_errno : EIO) : 0;

	if (!bad && fclose(stdout) != 0 && errno != EBADF)
		bad = output_errno ? output_errno : errno;
	/* a reader that went away (| head -1) ended the session quietly */
	if (!bad || bad == EPIPE)
		return rc;
	fprintf(stderr, "perfscript: cannot write to %s: %s\n", output_name, strerror(bad));
	return rc ? rc : 1;
}

/* A closed standard stream would hand its number to the next file opened,
 * and the script's output or our own messages would land in it: hold 0, 1
 * and 2 with /dev/null. Returns whether standard output was closed. */
static bool hold_std_fds(void)
{
	bool out_closed = fcntl(STDOUT_FILENO, F_GETFD) < 0;

	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);

		if (got >= 0 && got != fd) {
			dup2(got, fd);
			close(got);
		}
	}
	return out_closed;
}

static int run(int argc, char **argv, bool out_closed)
{
	struct options o = {0};
	struct ps_session *session = NULL;
	struct ps_script *sc = NULL;
	const char *chunk;
	int rc, first;
	rc = parse_options(argc, argv, &o);
	if (rc)
		return rc;
	if (!o.repl)
		watch_output(); /* writes to fd 1, so -o's dup2 below still applies */
	first = optind;
	if (o.describe) {
		if (first + 1 != argc)
			return die_usage("%s", "--describe wants one event string, e.g. "
					       "--describe 'cycles:u'");
		return describe(argv[first], o.json);
	}
	if (o.list) {
		if (first + 1 < argc)
			return die_usage("%s", "-l takes at most one GLOB, e.g. -l 'sched:*'");
		return list_events(first < argc ? argv[first] : NULL, o.json);
	}
	if (o.repl && (o.code || first < argc))
		return die_usage("%s", "-i reads Lua from stdin: give it no script and no -e");
	if (!o.repl && !o.code && first >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	chunk = o.code || o.repl ? o.code : argv[first++];
	session = make_session(&o);
	if (!session)
		return 1;
	if (o.ring_pages && (rc = ps_session__set_ring_pages(session, (size_t)o.ring_pages)) < 0) {
		fprintf(stderr, "perfscript: -b %ld: %s\n", o.ring_pages, ps_strerror(rc));
		ps_session__free(session);
		return 2;
	}
	ps_session__set_backend(session, o.backend);
	if (o.verbose)
		ps_bpf__set_verbose(true); /* libbpf's log, the verifier's included */
	if (out_closed && !o.output)
		fprintf(stderr, "perfscript: standard output is closed: the script's output is "
				"discarded (give -o FILE)\n");
	if (o.output && redirect_output(o.output, o.code || o.repl ? NULL : chunk)) {
		ps_session__free(session);
		return 1;
	}
	sc = ps_lua_script__new(session,
				&(struct ps_script_opts){.sz = sizeof(struct ps_script_opts),
							 .verbose = o.verbose,
							 .duration = o.duration,
							 .command = o.command,
							 .paths = o.includes,
							 .npaths = (size_t)o.nincludes,
							 .raw_names = o.raw_names});
	if (!sc) {
		fprintf(stderr, "perfscript: cannot start Lua: %s\n", strerror(errno));
		ps_session__free(session);
		return 1;
	}
	rc = o.repl ? ps_cli_repl__run(sc)
		    : ps_lua_script__run(sc, chunk, o.code != NULL, argv + first, argc - first,
					 argv, 1);
	ps_lua_script__free(sc);
	ps_session__free(session);
	return rc;
}

/* What the library's messages leave to the front end: our options. */
static void give_advice(void)
{
	ps_advice__set(PS_ADVICE_LIST_EVENTS, "; see perfscript -l");
	ps_advice__set(PS_ADVICE_RING_PAGES, " (-b PAGES)");
	ps_advice__set(PS_ADVICE_SYSTEM_WIDE, " (-a/-C)");
	ps_advice__set(PS_ADVICE_ATTACH, " (-p PID)");
	ps_advice__set(PS_ADVICE_PROCESS, " (-p PID, -c CMD)");
	ps_advice__set(PS_ADVICE_DURATION, "-T");
	ps_advice__set(PS_ADVICE_BACKEND, "; see --backend");
}

int main(int argc, char **argv)
{
	int n, rc;
	bool out_closed = hold_std_fds();
	const char *missing = NULL;
	char **args = split_args(argc, argv, &n, &missing);

	give_advice();
	if (!args) {
		perror("perfscript");
		return 1;
	}
	if (missing)
		rc = die_usage("%s wants a value", missing);
	else
		rc = run(n, args, out_closed);
	free(args);
	return finish_output(rc);
}
