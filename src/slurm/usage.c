/*
 * usage.c - sacct run and its records written back out (usage.h).
 *
 * Invariants: records are written in the order the reader made them
 * (sacct's job order, then each job's nodes); a job's entry sums exactly
 * its records, so the total of gpu_seconds over jobs is the total over
 * records.  Text from Slurm never breaks a CSV line: ',' and line breaks
 * in it become '_' (the chargeback's CSV has no quoting).
 */
#include "slurm/usage.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/fmt.h"
#include "util/json.h"
#include "util/mem.h"

static void fmt_time(int64_t ms, char *out, size_t size)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int gf_slurm_run_sacct(const char *sacct, int64_t since_ms, int64_t until_ms,
		       const char *out_path, struct gf_err *e)
{
	char s[32], u[32];
	fmt_time(since_ms, s, sizeof(s));
	fmt_time(until_ms, u, sizeof(u));
	s[19] = u[19] = '\0'; /* sacct takes no zone: TZ=UTC says it */
	int fd = open(out_path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return gf_err_set(e, -errno, "cannot write '%s': %s", out_path,
				  gf_strerror(-errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int err = -errno;
		close(fd);
		return gf_err_set(e, err, "cannot run sacct: %s",
				  gf_strerror(err));
	}
	if (pid == 0) {
		dup2(fd, STDOUT_FILENO);
		setenv("TZ", "UTC", 1);
		/* the child's own copies: execvp takes char *const[] */
		char *argv[] = { gf_strdup(sacct),
				 gf_strdup("-a"),
				 gf_strdup("-X"),
				 gf_strdup("-P"),
				 gf_strdup("-S"),
				 s,
				 gf_strdup("-E"),
				 u,
				 gf_strdup("-o"),
				 gf_strdup(GF_SLURM_SACCT_FIELDS),
				 NULL };
		execvp(sacct, argv);
		dprintf(STDERR_FILENO,
			"gpufleet slurm usage: cannot run '%s': %s\n", sacct,
			gf_strerror(-errno));
		_exit(127);
	}
	close(fd);
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return gf_err_set(e, -errno, "cannot wait for sacct");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
		return gf_err_set(e, GF_ENOTFOUND,
				  "cannot run '%s' (Debian: slurm-client; or "
				  "give a saved --sacct-file)",
				  sacct);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return gf_err_set(e, GF_EINVAL,
				  "'%s -S %s -E %s' failed (exit %d): its "
				  "message is above",
				  sacct, s, u,
				  WIFEXITED(st) ? WEXITSTATUS(st) : 128);
	return 0;
}

/* Text safe in the chargeback's CSV (no quoting there). */
static void csv_str(struct gf_buf *b, const char *s)
{
	for (; *s; s++)
		gf_buf_putc(b,
			    *s == ',' || *s == '\n' || *s == '\r' ? '_' : *s);
}

static void csv_num(struct gf_buf *b, double v)
{
	if (!isnan(v))
		gf_buf_printf(b, "%.10g", v);
}

/* The value of key in "k=v;k=v" labels, into out ("" when absent). */
static void label(const char *labels, const char *key, char *out, size_t size)
{
	size_t kl = strlen(key);
	out[0] = '\0';
	for (const char *p = labels; p && *p;) {
		size_t len = strcspn(p, ";");
		if (len > kl && strncmp(p, key, kl) == 0 && p[kl] == '=') {
			gf_note(out, size, "%.*s", (int)(len - kl - 1),
				p + kl + 1);
			return;
		}
		p += len;
		if (*p)
			p++;
	}
}

static const char *str(const struct gf_charge_input *in, uint32_t id)
{
	const char *s = gf_charge_str(in, id);
	return s ? s : "";
}

int gf_slurm_usage_csv(const struct gf_charge_input *in, struct gf_buf *out)
{
	gf_buf_puts(out, "cluster,node,namespace,pod,container,start,end,gpus,"
			 "cpu_req,cpu_use,ram_req_gib,ram_use_gib,labels,"
			 "gpu_model\n");
	for (size_t i = 0; i < in->nrec; i++) {
		const struct gf_charge_record *r = &in->rec[i];
		const struct gf_charge_extra *x = &in->extra[r->extra];
		const char *labels = str(in, x->labels);
		char user[128], t0[32], t1[32];
		label(labels, "user", user, sizeof(user));
		fmt_time(r->start_ms, t0, sizeof(t0));
		fmt_time(r->end_ms, t1, sizeof(t1));
		const uint32_t ids[] = { r->cluster, r->node, r->ns, r->pod };
		for (int k = 0; k < 4; k++) {
			csv_str(out, str(in, ids[k]));
			gf_buf_putc(out, ',');
		}
		csv_str(out, user);
		gf_buf_printf(out, ",%s,%s,", t0, t1);
		csv_num(out, r->gpus);
		gf_buf_putc(out, ',');
		csv_num(out, r->cpu_req);
		gf_buf_puts(out, ",,");
		csv_num(out, r->ram_req);
		gf_buf_puts(out, ",,");
		csv_str(out, labels);
		gf_buf_putc(out, ',');
		csv_str(out, str(in, x->gpu_model));
		gf_buf_putc(out, '\n');
	}
	return gf_buf_error(out);
}

/* A job: its records, consecutive in the input (the reader adds a
 * job's nodes one after the other). */
struct job {
	size_t first, n;
	double gpus, gpu_s;
	int64_t start, end;
};

static size_t next_job(const struct gf_charge_input *in, size_t i,
		       struct job *j)
{
	const struct gf_charge_record *r0 = &in->rec[i];
	memset(j, 0, sizeof(*j));
	j->first = i;
	j->start = r0->start_ms;
	j->end = r0->end_ms;
	while (i < in->nrec && in->rec[i].pod == r0->pod &&
	       in->rec[i].src == r0->src && in->rec[i].line == r0->line) {
		const struct gf_charge_record *r = &in->rec[i++];
		j->gpus += r->gpus;
		j->gpu_s += r->gpus * (double)(r->end_ms - r->start_ms) / 1e3;
		j->n++;
	}
	return i;
}

int gf_slurm_usage_json(const struct gf_charge_input *in, struct gf_buf *out)
{
	struct gf_json js;
	gf_json_init(&js, out);
	gf_json_obj_begin(&js, NULL);
	gf_json_arr_begin(&js, "jobs");
	double total = 0;
	struct job j;
	for (size_t i = 0; i < in->nrec; i = j.first + j.n) {
		next_job(in, i, &j);
		const struct gf_charge_record *r = &in->rec[i];
		const struct gf_charge_extra *x = &in->extra[r->extra];
		const char *labels = str(in, x->labels);
		char v[128], t[32];
		gf_json_obj_begin(&js, NULL);
		gf_json_str(&js, "job", str(in, r->pod));
		gf_json_str(&js, "cluster", str(in, r->cluster));
		gf_json_str(&js, "account", str(in, r->ns));
		static const char *const keys[] = { "user", "partition",
						    "state" };
		for (int k = 0; k < 3; k++) {
			label(labels, keys[k], v, sizeof(v));
			gf_json_str(&js, keys[k], v);
		}
		gf_json_arr_begin(&js, "nodes");
		for (size_t k = 0; k < j.n; k++)
			gf_json_str(&js, NULL,
				    str(in, in->rec[j.first + k].node));
		gf_json_arr_end(&js);
		gf_json_double(&js, "gpus", j.gpus);
		gf_json_str(&js, "gpu_model", str(in, x->gpu_model));
		fmt_time(j.start, t, sizeof(t));
		gf_json_str(&js, "start", t);
		fmt_time(j.end, t, sizeof(t));
		gf_json_str(&js, "end", t);
		gf_json_double(&js, "seconds", (double)(j.end - j.start) / 1e3);
		gf_json_double(&js, "gpu_seconds", j.gpu_s);
		gf_json_obj_end(&js);
		total += j.gpu_s;
	}
	gf_json_arr_end(&js);
	gf_json_double(&js, "gpu_seconds", total);
	gf_json_obj_end(&js);
	gf_buf_putc(out, '\n');
	return gf_json_error(&js) ? gf_json_error(&js) : gf_buf_error(out);
}

/* One row of the table, as text. */
struct row {
	char c[9][64];
};

enum { TB_COLS = 9 };

static void table_row(const struct gf_charge_input *in, const struct job *j,
		      size_t i, struct row *w)
{
	const struct gf_charge_record *r = &in->rec[i];
	const struct gf_charge_extra *x = &in->extra[r->extra];
	const char *labels = str(in, x->labels);
	gf_note(w->c[0], sizeof(w->c[0]), "%s", str(in, r->pod));
	gf_note(w->c[1], sizeof(w->c[1]), "%s", str(in, r->ns));
	label(labels, "user", w->c[2], sizeof(w->c[2]));
	label(labels, "state", w->c[3], sizeof(w->c[3]));
	gf_note(w->c[4], sizeof(w->c[4]), "%g", j->gpus);
	gf_note(w->c[5], sizeof(w->c[5]), "%s", str(in, x->gpu_model));
	fmt_time(j->start, w->c[6], sizeof(w->c[6]));
	gf_note(w->c[7], sizeof(w->c[7]), "%.0f",
		(double)(j->end - j->start) / 1e3);
	gf_note(w->c[8], sizeof(w->c[8]), "%.0f", j->gpu_s);
}

/* Text columns left-aligned, numbers (GPUS, SECONDS, GPU_SECONDS)
 * right-aligned, each as wide as its widest cell. */
static void table_line(struct gf_buf *out, const struct row *w,
		       const int *width)
{
	static const bool right[TB_COLS] = {
		[4] = true, [7] = true, [8] = true
	};
	for (int c = 0; c < TB_COLS; c++)
		gf_buf_printf(out, right[c] ? "%*s%s" : "%-*s%s", width[c],
			      w->c[c], c + 1 < TB_COLS ? " " : "\n");
}

/*
 * Two passes over the jobs: the widths, then the lines, so that any text
 * (a state "CANCELLED by 0", a long account) keeps the columns aligned.
 */
int gf_slurm_usage_table(const struct gf_charge_input *in, struct gf_buf *out)
{
	static const struct row head = { { "JOB", "ACCOUNT", "USER", "STATE",
					   "GPUS", "MODEL", "START", "SECONDS",
					   "GPU_SECONDS" } };
	int width[TB_COLS];
	for (int c = 0; c < TB_COLS; c++)
		width[c] = (int)strlen(head.c[c]);
	struct job j;
	struct row w;
	for (size_t i = 0; i < in->nrec; i = j.first + j.n) {
		next_job(in, i, &j);
		table_row(in, &j, i, &w);
		for (int c = 0; c < TB_COLS; c++)
			if ((int)strlen(w.c[c]) > width[c])
				width[c] = (int)strlen(w.c[c]);
	}
	table_line(out, &head, width);
	double total = 0;
	int njobs = 0;
	for (size_t i = 0; i < in->nrec; i = j.first + j.n) {
		next_job(in, i, &j);
		table_row(in, &j, i, &w);
		table_line(out, &w, width);
		total += j.gpu_s;
		njobs++;
	}
	gf_buf_printf(out, "%d job%s, %.0f GPU-seconds (%.2f GPU-hours)\n",
		      njobs, njobs == 1 ? "" : "s", total, total / 3600);
	return gf_buf_error(out);
}
