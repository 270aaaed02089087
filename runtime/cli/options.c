/*
 * options.c: perfscript's command line as options: the usage text, the
 * reordering that lets our options come before or after the script name,
 * getopt over them with each value checked (a usage error names the option
 * and what it wants), and -c's string split into argv (or handed to
 * /bin/sh -c when it has shell syntax).
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <limits.h>

#include "base/array.h"
#include "base/path.h"
#include "cli/options.h"

const char ps_cli_usage[] =
    "usage: perfscript [options] SCRIPT.lua [target options] [script args]\n"
    "       perfscript -e 'lua code' [options]\n"
    "       perfscript -i [options]           interactive: Lua at a prompt\n"
    "       perfscript --describe [--json] 'EVENT-SPEC'\n"
    "       perfscript -l [--json] [GLOB]     list the events this machine can name\n"
    "\n"
    "  -e CODE         run CODE instead of a script file\n"
    "  -c 'CMD args'   run CMD as the target; counters follow it from exec, with\n"
    "                  its children; the session ends when it exits\n"
    "  -p PID          attach to a running process: all its threads, and the\n"
    "                  processes it starts from then on (as perf's -p)\n"
    "      --no-children  with -p or -c: the process's threads only, not the\n"
    "                  processes it starts (bcc's -p)\n"
    "  -a              count system-wide, on every CPU\n"
    "  -C LIST         count on these CPUs only, e.g. 0-3,5\n"
    "  -G CGROUP       count only the tasks of this cgroup v2 group (and those\n"
    "                  below it), its path below the cgroup2 mount; implies -a\n"
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
    "      --debuginfod-wait SECONDS  how long the session may wait, in all, for\n"
    "                        debug files of stripped binaries from $DEBUGINFOD_URLS\n"
    "                        (default 2; 0: use only what arrives meanwhile; -1: ask none)\n"
    "      --describe SPEC   print the perf_event_attr fields SPEC sets\n"
    "      --json            with --describe or -l: a JSON array\n"
    "      --version         print the version\n"
    "  -h, --help            this text\n"
    "\n"
    "Options before the script's name are perfscript's. After it, only the target\n"
    "options -c, -p, -a, -C, -G, -T and --no-children are; every other argument\n"
    "(--help, -e, -o, -I included) goes to the script in arg[1..n], and after --\n"
    "all do.\n"
    "\n";

int ps_cli__die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "perfscript: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n(perfscript --help lists the options)\n");
	return 2;
}

/* Split "cmd a 'b c'" into argv. Strings with shell syntax run under
 * /bin/sh -c instead, so that pipes and redirections mean what they say. */
char **ps_cli__command_argv(const char *cmd)
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

bool ps_cli__quotes_closed(const char *cmd)
{
	char quote = 0;

	if (strpbrk(cmd, "|&;<>()$`\\*?[]{}~#=\n"))
		return true; /* the shell's to judge */
	for (const char *p = cmd; *p; p++)
		if (!quote && (*p == '\'' || *p == '"'))
			quote = *p;
		else if (quote && *p == quote)
			quote = 0;
	return quote == 0;
}

/* Where the docs are: installed beside this binary (PREFIX/bin and
 * PREFIX/share/doc/perfscript, wherever the tree was put), or the source
 * tree's docs/ beside a built one; false when neither is there. */
static bool docs_dir(char *dir, size_t len)
{
	static const char *const rel[] = {"/../share/doc/perfscript", "/docs"};
	char exe[PATH_MAX];

	if (ps_path__self_dir(exe, sizeof(exe)) < 0)
		return false;
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char guide[PATH_MAX + 64];

		snprintf(dir, len, "%s%s", exe, rel[i]);
		snprintf(guide, sizeof(guide), "%s/guide.md", dir);
		if (access(guide, R_OK) == 0)
			return true;
	}
	return false;
}

void ps_cli__usage(FILE *to)
{
	char dir[PATH_MAX + 32];

	fputs(ps_cli_usage, to);
	if (docs_dir(dir, sizeof(dir)))
		fprintf(to, "Docs: %s/guide.md, events.md, api.md, tapsets.md; man perfscript.\n",
			dir);
	else
		fputs("Docs: man perfscript.\n", to);
}

/* Options with a value, and flags, as getopt's string spells them. */
static const char short_opts[] = "+e:c:p:aC:G:T:I:o:b:vhli";

/* The options that may also follow the script's name: what the session
 * watches and for how long (perfscript s.lua -c ./app -T 5). */
static const char target_opts[] = "c:p:aC:G:T:";

/* Whether arg is one of our options (only a target option when
 * target_only); *takes_next when its value is the next argument. A cluster
 * like -av or -T5 counts. */
static bool is_our_option(const char *arg, bool target_only, bool *takes_next)
{
	static const char *const longs[] = {"--describe", "--json", "--version", "--help",
					    "--no-demangle"};
	const char *set = target_only ? target_opts : short_opts + 1;

	*takes_next = false;
	if (arg[0] != '-' || !arg[1])
		return false;
	if (arg[1] == '-') {
		if (!strcmp(arg, "--no-children")) /* a target option: after the script too */
			return true;
		if (target_only)
			return false;
		if (!strncmp(arg, "--backend", 9) && (arg[9] == '=' || !arg[9])) {
			*takes_next = !arg[9];
			return true;
		}
		if (!strncmp(arg, "--debuginfod-wait", 17) && (arg[17] == '=' || !arg[17])) {
			*takes_next = !arg[17];
			return true;
		}
		for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
			if (!strcmp(arg, longs[i]))
				return true;
		return false;
	}
	for (const char *c = arg + 1; *c; c++) {
		const char *o = strchr(set, *c);

		if (!o || *c == ':')
			return false;
		if (o[1] == ':') {
			*takes_next = c[1] == '\0';
			return true;
		}
	}
	return true;
}

/* Reorder argv as [argv0, our options..., "--", script, script args...].
 * Before the script's name every option is ours; after it only the target
 * options (-c, -p, -a, -C, -G, -T) are, so that perfscript s.lua -c ./app
 * works, and every other argument (--help, -e, -o, --json included) is
 * the script's, as it is a Lua or Python script's; after "--" all are. */
char **ps_cli__split_args(int argc, char **argv, int *outc, const char **missing)
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
			   (np > 0 && is_our_option(argv[i], true, &next))) {
			/* Before the script every option is ours, so getopt reports
			 * the unknown ones. */
			is_our_option(argv[i], np > 0, &next);
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
/* getopt's '?': an option not known, or one without its value (optopt
 * is then the option's letter or value). */
static int unknown_option(const char *given)
{
	char opt[3] = {'-', (char)optopt, '\0'};

	if (optopt && optopt != '?' && (strchr(short_opts, optopt) || given[1] == '-'))
		return ps_cli__die_usage("%s wants a value", given[1] == '-' ? given : opt);
	return ps_cli__die_usage("unknown option '%s'",
				 optopt > ' ' && given[1] != '-' ? opt : given);
}

static int checked_option(int c, const char *arg, struct ps_cli_options *o)
{
	char *end;

	switch (c) {
	case 'c':
		if (!arg[strspn(arg, " \t")])
			return ps_cli__die_usage("-c wants a command, got '%s'", arg);
		if (!ps_cli__quotes_closed(arg))
			return ps_cli__die_usage("-c: a quote is left open in '%s'", arg);
		o->command = arg;
		return 0;
	case 'p':
		errno = 0;
		o->pid = (pid_t)strtol(arg, &end, 10);
		if (errno || *end || o->pid <= 0)
			return ps_cli__die_usage("-p wants a process id, got '%s'", arg);
		return 0;
	case 'T':
		/* the timer counts nanoseconds in 64 bits: keep well inside */
		o->duration = strtod(arg, &end);
		if (end == arg || *end || !(o->duration >= 1e-9 && o->duration <= 1e9))
			return ps_cli__die_usage(
			    arg[0] == '-' ? "-T wants a number of seconds, got '%s': " PS_CLI_T_IS
					  : "-T wants a number of seconds from 1e-9 to 1e9 "
					    "(e.g. 2.5), got '%s'",
			    arg);
		return 0;
	case 'W':
		o->debuginfod_wait = strtod(arg, &end);
		o->debuginfod_set = true;
		if (end == arg || *end || !(o->debuginfod_wait >= -1 && o->debuginfod_wait <= 3600))
			return ps_cli__die_usage(
			    "--debuginfod-wait wants seconds from 0 to 3600, or -1 "
			    "to ask no server; got '%s'",
			    arg);
		return 0;
	case 'b':
		errno = 0;
		o->ring_pages = strtol(arg, &end, 10);
		if (errno || end == arg || *end || o->ring_pages <= 0 ||
		    o->ring_pages > (long)PS_RING_PAGES_MAX ||
		    (o->ring_pages & (o->ring_pages - 1)))
			return ps_cli__die_usage(
			    "-b wants a power of two of pages from 1 to 1048576 "
			    "(4 GiB), e.g. 1024; got '%s'",
			    arg);
		return 0;
	case 'I':
		if (o->nincludes == 32)
			return ps_cli__die_usage("too many -I directories (at most %s)", "32");
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
			return ps_cli__die_usage("--backend wants auto, bpf or perf, got '%s'",
						 arg);
		return 0;
	}
	return 2;
}

int ps_cli__parse_options(int argc, char **argv, struct ps_cli_options *o)
{
	static const struct option longs[] = {
	    {"describe", no_argument, NULL, 'D'},
	    {"json", no_argument, NULL, 'J'},
	    {"version", no_argument, NULL, 'V'},
	    {"help", no_argument, NULL, 'h'},
	    {"backend", required_argument, NULL, 'B'},
	    {"no-demangle", no_argument, NULL, 'N'},
	    {"no-children", no_argument, NULL, 'K'},
	    {"debuginfod-wait", required_argument, NULL, 'W'},
	    {NULL, 0, NULL, 0},
	};
	int c, rc;

	opterr = 0; /* our own words, with the --help hint, and exit 2 */
	while ((c = getopt_long(argc, argv, short_opts, longs, NULL)) != -1) {
		switch (c) {
		case '?':
			return unknown_option(argv[optind - 1]);
		case 'e': /* several run in order, each its own chunk, as lua(1) does */
			if (o->nchunks == (int)(sizeof(o->chunks) / sizeof(o->chunks[0])))
				return ps_cli__die_usage("too many -e chunks (at most %s)", "32");
			o->chunks[o->nchunks++] = optarg;
			o->code = o->chunks[0];
			break;
		case 'a':
			o->system_wide = true;
			break;
		case 'C':
			o->cpus = optarg;
			break;
		case 'G':
			o->cgroup = optarg;
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
			o->answered = true; /* main checks that it was written */
			return 0;
		case 'h':
			ps_cli__usage(stdout);
			o->answered = true;
			return 0;
		case 'N':
			o->raw_names = true;
			break;
		case 'K':
			o->no_children = true;
			break;
		default:
			if ((rc = checked_option(c, optarg, o)))
				return rc;
		}
	}
	if (o->pid && (o->command || o->system_wide || o->cpus || o->cgroup))
		return ps_cli__die_usage("%s", "-p cannot be combined with -c, -a, -C or -G");
	if (o->no_children && !o->pid && !o->command)
		return ps_cli__die_usage("%s", "--no-children goes with -p PID or -c CMD");
	return 0;
}
