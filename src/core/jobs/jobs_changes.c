/*
 * jobs_changes.c - the jobs a call changed: appended to the caller's
 * gf_ctl_changes once per mark (a pass, or a fresh mark outside one), or
 * kept in the job table's later list for the next pass to report; and a
 * job's reason.  It takes the job table alone (table.h).
 */

#include "core/jobs/jobs_changes.h"

#include <stdarg.h>
#include <stdio.h>

#include "core/jobs/ctl_impl.h"
#include "core/jobs/table.h"
#include "util/fmt.h"
#include "util/mem.h"

void gf__reason(struct gf_job *j, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	gf_vnote(j->reason, sizeof(j->reason), fmt, ap);
	va_end(ap);
}

uint32_t gf__mark(struct gf__jobtab *t)
{
	if (++t->pass == 0) /* marks start at 0: never a pass number */
		++t->pass;
	return t->pass;
}

void gf__report(struct gf__jobtab *t, struct gf_ctl_changes *out, uint32_t mark,
		int jid)
{
	if (out == NULL) {
		gf__later(t, jid);
		return;
	}
	struct gf__pass ps = { .pass = mark, .out = out };
	gf__changed(t, &ps, jid);
}

void gf__changed(struct gf__jobtab *t, struct gf__pass *ps, int jid)
{
	struct gf__jrec *j = &t->jr[jid];
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

void gf__later(struct gf__jobtab *t, int jid)
{
	gf__ids_push(&t->later, jid);
}

void gf_ctl_changes_release(struct gf_ctl_changes *ch)
{
	if (ch == NULL)
		return;
	gf_free(ch->ids);
	ch->n = ch->cap = 0;
}
