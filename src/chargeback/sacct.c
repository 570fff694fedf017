/*
 * sacct.c - Slurm's accounting as chargeback records: the output of
 *
 *   TZ=UTC sacct -a -X -P -S START -E END \
 *       -o JobID,Cluster,Account,User,Partition,QOS,JobName,State,\
 *          NodeList,Start,End,AllocTRES
 *
 * (--parsable2: '|' between fields, a header line).  Each job becomes a
 * record per node of its NodeList (hostlist ranges expanded), with its
 * AllocTRES split evenly over them: cpu as cores, mem as GiB (Slurm's
 * K/M/G/T suffixes; M when none), gres/gpu as GPUs and a typed
 * gres/gpu:TYPE as the GPU model.  Slurm bills allocation, never usage,
 * so requests are all the record says (usage absent).  Names: namespace
 * the account, pod the job id, labels user, partition, qos, job_name,
 * state.  Jobs that never started (Start "Unknown" or "None") are not
 * usage and are left out; a job still running ends at now.
 */
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chargeback/chargeback.h"
#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/str.h"

#define SACCT_LINE_MAX 8192
#define SACCT_FIELDS   64
#define HOSTS_MAX      256
#define HOST_MAX       64

struct tres {
	double cpu, mem_gib, gpus;
	char model[64];
};

/* Memory: a number with an optional K/M/G/T suffix (M by default). */
static int parse_mem(const char *s, double *gib)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !isfinite(v) || v < 0)
		return -1;
	double mult = 1.0 / 1024; /* M */
	switch (*end) {
	case 'K':
		mult = 1.0 / (1024 * 1024);
		end++;
		break;
	case 'M':
		end++;
		break;
	case 'G':
		mult = 1;
		end++;
		break;
	case 'T':
		mult = 1024;
		end++;
		break;
	default:
		break;
	}
	if (*end)
		return -1;
	*gib = v * mult;
	return 0;
}

static int parse_tres(char *s, struct tres *t, char *why, size_t size)
{
	memset(t, 0, sizeof(*t));
	for (char *tok = s; tok && *tok;) {
		char *comma = strchr(tok, ',');
		if (comma)
			*comma = '\0';
		char *eq = strchr(tok, '=');
		if (!eq) {
			gf_note(why, size,
				"field 'AllocTRES': '%.60s' is not "
				"NAME=COUNT",
				tok);
			return -1;
		}
		*eq = '\0';
		const char *v = eq + 1;
		char *end;
		double n = strtod(v, &end);
		if (strcmp(tok, "mem") == 0) {
			if (parse_mem(v, &t->mem_gib)) {
				gf_note(why, size,
					"field 'AllocTRES': mem '%.40s' is not "
					"a size",
					v);
				return -1;
			}
		} else if (strcmp(tok, "cpu") == 0 ||
			   strcmp(tok, "gres/gpu") == 0) {
			if (end == v || *end || !(n >= 0)) {
				gf_note(why, size,
					"field 'AllocTRES': %.12s '%.40s' is not "
					"a count",
					tok, v);
				return -1;
			}
			*(strcmp(tok, "cpu") == 0 ? &t->cpu : &t->gpus) = n;
		} else if (strncmp(tok, "gres/gpu:", 9) == 0 && !t->model[0]) {
			if (gf_fmt(t->model, sizeof(t->model), "%s", tok + 9)) {
				gf_note(why, size,
					"field 'AllocTRES': GPU model "
					"'%.40s' is too long",
					tok + 9);
				return -1;
			}
		}
		tok = comma ? comma + 1 : NULL;
	}
	return 0;
}

/* Expand one hostlist item "gpu[01-03,07]" or "n1" into out. */
static int expand_item(const char *s, size_t len, char (*out)[HOST_MAX], int *n)
{
	const char *lb = memchr(s, '[', len);
	if (!lb) {
		if (*n >= HOSTS_MAX || len >= HOST_MAX || len == 0)
			return -1;
		memcpy(out[*n], s, len); /* len < HOST_MAX, checked */
		out[(*n)++][len] = '\0';
		return 0;
	}
	const char *rb = memchr(lb, ']', len - (size_t)(lb - s));
	if (!rb)
		return -1;
	int plen = (int)(lb - s);
	const char *suffix = rb + 1;
	int slen = (int)(len - (size_t)(suffix - s));
	for (const char *p = lb + 1; p < rb;) {
		const char *q = p;
		while (q < rb && *q != ',')
			q++;
		char a[24] = "", b[24] = "";
		const char *dash = memchr(p, '-', (size_t)(q - p));
		size_t la = (size_t)((dash ? dash : q) - p);
		if (la == 0 || la >= sizeof(a))
			return -1;
		memcpy(a, p, la);
		if (dash) {
			size_t lb2 = (size_t)(q - dash - 1);
			if (lb2 == 0 || lb2 >= sizeof(b))
				return -1;
			memcpy(b, dash + 1, lb2);
		} else {
			memcpy(b, a, la);
		}
		long lo = strtol(a, NULL, 10), hi = strtol(b, NULL, 10);
		if (hi < lo || hi - lo > HOSTS_MAX)
			return -1;
		for (long i = lo; i <= hi; i++) {
			if (*n >= HOSTS_MAX)
				return -1;
			if (gf_fmt(out[(*n)++], HOST_MAX, "%.*s%0*ld%.*s", plen,
				   s, (int)la, i, slen, suffix))
				return -1; /* a host name too long */
		}
		p = q < rb ? q + 1 : q;
	}
	return 0;
}

static int expand_hosts(const char *s, char (*out)[HOST_MAX], int *n)
{
	*n = 0;
	while (*s) {
		const char *p = gf_str_item_end(s, ',', '[', ']');
		if (expand_item(s, (size_t)(p - s), out, n))
			return -1;
		s = *p ? p + 1 : p;
	}
	return *n > 0 ? 0 : -1;
}

/* Slurm's times: "2024-05-01T10:00:00" (no zone: UTC), or unix. */
static int sacct_time(const char *s, int64_t *ms)
{
	char buf[40];
	if (strlen(s) == 19 && s[10] == 'T') {
		memcpy(buf, s, 19); /* 19 bytes, checked */
		memcpy(buf + 19, "Z", 2);
		return gf_cb_parse_time(buf, ms);
	}
	return gf_cb_parse_time(s, ms);
}

struct job {
	const char *f[SACCT_FIELDS];
};

enum {
	F_ID = 0,
	F_ACCOUNT,
	F_NODES,
	F_START,
	F_END,
	F_TRES,
	F_CLUSTER,
	F_USER,
	F_PART,
	F_QOS,
	F_NAME,
	F_STATE,
	NF
};

static const char *const field_names[NF] = { "JobID",	"Account", "NodeList",
					     "Start",	"End",	   "AllocTRES",
					     "Cluster", "User",	   "Partition",
					     "QOS",	"JobName", "State" };

static uint32_t intern(struct gf_charge_input *in, const char *s)
{
	uint32_t id = 0;
	/* too long: "" (0) */
	(void)!gf_charge_intern(in, s, strnlen(s, GF_CHARGE_STR_MAX), &id);
	return id;
}

/* Labels "user=..;partition=.." of a job (';' and '=' dropped). */
static uint32_t labels_of(struct gf_charge_input *in, const char *const *v)
{
	static const char *const keys[] = { "user", "partition", "qos",
					    "job_name", "state" };
	static const int from[] = { F_USER, F_PART, F_QOS, F_NAME, F_STATE };
	char buf[GF_CHARGE_STR_MAX + 1];
	size_t len = 0;
	for (int i = 0; i < 5; i++) {
		if (!v[from[i]] || !*v[from[i]])
			continue;
		char val[64];
		size_t k = 0;
		for (const char *p = v[from[i]]; *p && k < sizeof(val) - 1; p++)
			if (*p != ';' && *p != '=')
				val[k++] = *p;
		val[k] = '\0';
		int w = snprintf(buf + len, sizeof(buf) - len, "%s%s=%s",
				 len ? ";" : "", keys[i], val);
		if (w < 0 || (size_t)w >= sizeof(buf) - len)
			break;
		len += (size_t)w;
	}
	buf[len] = '\0';
	return intern(in, buf);
}

static int job_records(struct gf_charge_input *in, const char *const *v,
		       uint32_t src, uint32_t line, int64_t now_ms, char *why,
		       size_t size)
{
	int64_t s, t;
	if (strcmp(v[F_START], "Unknown") == 0 ||
	    strcmp(v[F_START], "None") == 0 || !*v[F_START])
		return 0; /* never started: no usage */
	if (sacct_time(v[F_START], &s)) {
		gf_note(why, size, "field 'Start': '%.40s' is not a time",
			v[F_START]);
		return -1;
	}
	if (strcmp(v[F_END], "Unknown") == 0 || strcmp(v[F_END], "None") == 0)
		t = now_ms > s ? now_ms : s;
	else if (sacct_time(v[F_END], &t)) {
		gf_note(why, size, "field 'End': '%.40s' is not a time",
			v[F_END]);
		return -1;
	}
	if (t < s) {
		gf_note(why, size, "field 'End': before 'Start' (%.40s)",
			v[F_END]);
		return -1;
	}
	struct tres tr;
	char tres[SACCT_LINE_MAX];
	gf_note(tres, sizeof(tres), "%s", v[F_TRES]); /* from a line as long */
	if (parse_tres(tres, &tr, why, size))
		return -1;
	static char hosts[HOSTS_MAX][HOST_MAX];
	int nh;
	if (expand_hosts(v[F_NODES], hosts, &nh)) {
		gf_note(why, size,
			"field 'NodeList': cannot expand '%.60s' (at most "
			"%d hosts)",
			v[F_NODES], HOSTS_MAX);
		return -1;
	}
	struct gf_charge_extra xe;
	memset(&xe, 0, sizeof(xe));
	xe.labels = labels_of(in, v);
	xe.gpu_model = intern(in, tr.model);
	struct gf_charge_record r;
	memset(&r, 0, sizeof(r));
	r.cluster = intern(in, v[F_CLUSTER] && *v[F_CLUSTER] ? v[F_CLUSTER]
							     : "slurm");
	r.ns = intern(in, v[F_ACCOUNT]);
	r.pod = intern(in, v[F_ID]);
	r.start_ms = s;
	r.end_ms = t;
	r.gpus = tr.gpus / nh;
	r.cpu_req = tr.cpu / nh;
	r.cpu_use = NAN;
	r.ram_req = tr.mem_gib / nh;
	r.ram_use = NAN;
	r.other_cost = NAN;
	r.extra = gf_charge_extra_id(in, &xe);
	r.src = src;
	r.line = line;
	for (int i = 0; i < nh; i++) {
		r.node = intern(in, hosts[i]);
		if (gf_charge_add_record(in, &r)) {
			gf_note(why, size, "more than %u records",
				GF_CHARGE_RECORDS_MAX - 1);
			return -1;
		}
	}
	return 0;
}

/* Split a line on '|' into f; the count. */
static int split(char *s, const char **f)
{
	int n = 0;
	for (;;) {
		if (n == SACCT_FIELDS)
			return n;
		f[n++] = s;
		char *bar = strchr(s, '|');
		if (!bar)
			return n;
		*bar = '\0';
		s = bar + 1;
	}
}

static void chomp(char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		s[--n] = '\0';
}

static int header(const char *path, char *line, int *col, struct gf_err *e)
{
	const char *f[SACCT_FIELDS];
	chomp(line);
	int n = split(line, f);
	for (int k = 0; k < NF; k++) {
		col[k] = -1;
		for (int i = 0; i < n; i++)
			if (strcmp(f[i], field_names[k]) == 0)
				col[k] = i;
		if (k <= F_TRES && col[k] < 0)
			return gf_err_set(e, GF_EPARSE,
					  "'%s':1: field '%s' is missing (run "
					  "sacct with --parsable2 and -o "
					  "JobID,Account,NodeList,Start,End,"
					  "AllocTRES)",
					  path, field_names[k]);
	}
	return 0;
}

int gf_cb_read_sacct(struct gf_charge_input *in, const char *path,
		     int64_t now_ms, bool lenient, struct gf_cb_skips *sk,
		     struct gf_err *e)
{
	FILE *f = gf_file_open(path, "r", 0, e);
	if (!f)
		return e->code;
	char *line = gf_malloc(SACCT_LINE_MAX + 2);
	int col[NF], rc = 0;
	uint32_t src = intern(in, path), ln = 1;
	if (!fgets(line, SACCT_LINE_MAX + 2, f))
		rc = gf_err_set(e, GF_EPARSE, "'%s': empty file (no header)",
				path);
	else
		rc = header(path, line, col, e);
	while (rc == 0 && fgets(line, SACCT_LINE_MAX + 2, f)) {
		ln++;
		chomp(line);
		if (!*line)
			continue;
		const char *f2[SACCT_FIELDS];
		const char *v[NF];
		int n = split(line, f2);
		for (int k = 0; k < NF; k++)
			v[k] = col[k] >= 0 && col[k] < n ? f2[col[k]] : "";
		char why[300];
		if (job_records(in, v, src, ln, now_ms, why, sizeof(why)) == 0)
			continue;
		if (!lenient) {
			rc = gf_err_set(e, GF_EPARSE, "'%s':%u: %s", path, ln,
					why);
			break;
		}
		if (sk->n < GF_CHARGE_SKIPS_KEPT) {
			if (!sk->v)
				sk->v = gf_calloc(GF_CHARGE_SKIPS_KEPT,
						  sizeof(*sk->v));
			struct gf_charge_skip *s = &sk->v[sk->n++];
			s->src = src;
			s->line = ln;
			gf_note(s->why, sizeof(s->why), "%s", why);
		}
		sk->total++;
	}
	gf_free(line);
	fclose(f);
	return rc;
}
