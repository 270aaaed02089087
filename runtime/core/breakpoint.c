/*
 * breakpoint.c: the address of a breakpoint written mem:SYMBOL[+OFF].
 * The parser cannot know it (it depends on what the session counts), so it
 * is looked up here, when the counter first opens, in the target's address
 * space: this process's own mappings for self, /proc/PID/maps and the ELF
 * files it maps for -p or a command that already runs. A command still held
 * before exec has no address space yet; its executable's symbol is its
 * address only when the file is not position-independent (ET_EXEC), so a
 * PIE is refused with what to do instead. A system-wide session has no one
 * address space at all and is refused too. Each refusal is a sentence that
 * names the event, like the other open failures.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/advice.h"
#include "base/path.h"
#include "core/internal.h"
#include "symbols/resolve.h"

static void did_you_mean(char *msg, size_t msglen, const char *near)
{
	size_t used = strlen(msg);

	if (near[0] && used < msglen)
		snprintf(msg + used, msglen - used, " (did you mean '%s'?)", near);
}

/* Why symbol lookup failed, as a sentence naming the event. */
static void explain(const struct ps_counter *c, int err, const char *where, const char *near,
		    char *msg, size_t msglen)
{
	switch (err) {
	case -ENOENT:
		snprintf(msg, msglen, "cannot open '%s': no symbol '%s' in %s", c->name,
			 c->bp_symbol, where);
		did_you_mean(msg, msglen, near);
		break;
	case -EADDRNOTAVAIL:
		snprintf(msg, msglen,
			 "cannot open '%s': symbol '%s': the command's addresses are not known "
			 "before exec (PIE); attach to the running process%s, or use a non-PIE "
			 "build",
			 c->name, c->bp_symbol, ps_advice(PS_ADVICE_ATTACH, ""));
		break;
	case -ENOEXEC:
		snprintf(msg, msglen,
			 "cannot open '%s': symbol '%s': the command %s is not an ELF "
			 "executable (a script?); attach to the running process%s instead",
			 c->name, c->bp_symbol, where, ps_advice(PS_ADVICE_ATTACH, ""));
		break;
	case -ESRCH:
		snprintf(msg, msglen, "cannot open '%s': cannot look up symbol '%s': %s is gone",
			 c->name, c->bp_symbol, where);
		break;
	default:
		snprintf(msg, msglen, "cannot open '%s': cannot look up symbol '%s' in %s: %s",
			 c->name, c->bp_symbol, where, ps_strerror(err));
	}
}

int ps_counter__resolve_bp(struct ps_session *s, uint32_t slot, char *msg, size_t msglen)
{
	struct ps_counter *c = &s->slots[slot];
	char exe[4096], near[64] = "", where[4200];
	struct ps_symbols *syms = NULL;
	uint64_t addr = 0;
	pid_t pid;
	int err;

	if (!c->bp_symbol || c->bp_resolved)
		return 0;
	if (!msg)
		msglen = 0;
	if (s->kind == PS_TARGET_CPUS) {
		if (msglen)
			snprintf(
			    msg, msglen,
			    "cannot open '%s': a breakpoint on symbol '%s' needs one process's "
			    "address space, and a system-wide session%s has none; give "
			    "the address (mem:0x...) or count a process%s",
			    c->name, c->bp_symbol, ps_advice(PS_ADVICE_SYSTEM_WIDE, ""),
			    ps_advice(PS_ADVICE_PROCESS, ""));
		return -EINVAL;
	}
	syms = ps_symbols__new();
	if (!syms)
		return -ENOMEM;
	if (s->kind == PS_TARGET_COMMAND && s->held) {
		if (!s->argv0 || ps_path__find_exec(s->argv0, exe, sizeof(exe)) < 0) {
			err = -ENOENT;
			if (msglen)
				snprintf(msg, msglen,
					 "cannot open '%s': cannot find the command's "
					 "executable '%s' to look up symbol '%s' in",
					 c->name, s->argv0 ? s->argv0 : "", c->bp_symbol);
			goto cleanup;
		}
		err = ps_syms__lookup_exec(syms, exe, c->bp_symbol, &addr, near, sizeof(near));
		snprintf(where, sizeof(where), "%s", exe);
	} else {
		pid = s->kind == PS_TARGET_SELF ? s->self : s->pid;
		err = ps_syms__lookup(syms, pid, c->bp_symbol, &addr, near, sizeof(near));
		if (s->kind == PS_TARGET_SELF)
			snprintf(where, sizeof(where), "this process");
		else
			snprintf(where, sizeof(where), "process %d", (int)pid);
	}
	if (!err) {
		c->attr.bp_addr = addr + c->bp_offset;
		c->bp_resolved = true;
	} else if (msglen) {
		explain(c, err, where, near, msg, msglen);
	}
cleanup:
	ps_symbols__free(syms);
	return err;
}
