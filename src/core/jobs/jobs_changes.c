/*
 * jobs_changes.c - the jobs a call changed: appended to the caller's
 * gf_ctl_changes once per mark (a pass, or a fresh mark outside one), or
 * kept in ctl->later for the next pass to report; and a job's reason.
 * It reads the job table and calls no other file of core/jobs.
 */

#include "core/jobs/jobs_changes.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/jobs/ctl_impl.h"
#include "util/fmt.h"
#include "util/mem.h"

void gf__reason(struct gf_job *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(j->reason, sizeof(j->reason), fmt, ap);
	va_end(ap);
}

static void push_id(int **a, int *n, int *cap, int v)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*a = gf_reallocarray(*a, (size_t)*cap, sizeof(**a));
	}
	(*a)[(*n)++] = v;
}

uint32_t gf__mark(struct gf_ctl *ctl)
{
	if (++ctl->pass == 0) /* marks start at 0: never a pass number */
		++ctl->pass;
	return ctl->pass;
}

void gf__report(struct gf_ctl *ctl, struct gf_ctl_changes *out, uint32_t mark,
		int jid)
{
	if (out == NULL) {
		gf__later(ctl, jid);
		return;
	}
	struct gf__pass ps = { .pass = mark, .out = out };
	gf__changed(ctl, &ps, jid);
}

void gf__changed(struct gf_ctl *ctl, struct gf__pass *ps, int jid)
{
	struct gf__jrec *j = &ctl->jr[jid];
	if (ps == NULL || ps->out == NULL || j->mark == ps->pass)
		return;
	j->mark = ps->pass;
	struct gf_ctl_changes *ch = ps->out;
	if (ch->n == ch->cap) {
		ch->cap = ch->cap ? ch->cap * 2 : 64;
		ch->ids = gf_reallocarray(ch->ids, (size_t)ch->cap,
					  sizeof(*ch->ids));
	}
	ch->ids[ch->n++] = j->job->id;
}

void gf__later(struct gf_ctl *ctl, int jid)
{
	push_id(&ctl->later, &ctl->nlater, &ctl->later_cap, jid);
}

void gf_ctl_changes_release(struct gf_ctl_changes *ch)
{
	if (ch == NULL)
		return;
	gf_free(ch->ids);
	ch->n = ch->cap = 0;
}
