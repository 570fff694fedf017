/*
 * snapshot.c - a Slurm cluster's nodes and jobs, and the parsers of the
 * strings slurmctld writes them with (snapshot.h).
 *
 * Invariants: every node has 0 <= ngpus <= GF_SLURM_GPUS_MAX and its used
 * mask has no bit at or past ngpus; jobs are only running or pending.
 */
#include "slurm/snapshot.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/bitmap.h>

#include "util/file.h"
#include "util/fmt.h"
#include "util/mem.h"
#include "util/str.h"

#define LINE_MAX_  65536
#define FIELDS_MAX 128

void gf_slurm_snapshot_init(struct gf_slurm_snapshot *s)
{
	memset(s, 0, sizeof(*s));
}

void gf_slurm_snapshot_release(struct gf_slurm_snapshot *s)
{
	gf_free(s->nodes);
	gf_free(s->jobs);
	memset(s, 0, sizeof(*s));
}

int gf_slurm_snapshot_add_node(struct gf_slurm_snapshot *s,
			       const struct gf_slurm_node *n)
{
	if (s->nnodes >= GF_SLURM_NODES_MAX)
		return GF_ETOOBIG;
	s->nodes = gf_grow(s->nodes, sizeof(*s->nodes), &s->nodes_cap,
			   (size_t)s->nnodes, 16);
	s->nodes[s->nnodes] = *n;
	return s->nnodes++;
}

int gf_slurm_snapshot_add_job(struct gf_slurm_snapshot *s,
			      const struct gf_slurm_job *j)
{
	if (s->njobs >= GF_SLURM_JOBS_MAX)
		return GF_ETOOBIG;
	s->jobs = gf_grow(s->jobs, sizeof(*s->jobs), &s->jobs_cap,
			  (size_t)s->njobs, 64);
	s->jobs[s->njobs] = *j;
	return s->njobs++;
}

int gf_slurm_snapshot_find(const struct gf_slurm_snapshot *s, const char *name)
{
	for (int i = 0; i < s->nnodes; i++)
		if (strcmp(s->nodes[i].name, name) == 0)
			return i;
	return -1;
}

bool gf_slurm_list_has(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		size_t len = strcspn(p, ",");
		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p += len;
		if (*p == ',')
			p++;
	}
	return false;
}

static int parse_count(const char *s, size_t len, int *out)
{
	char buf[24];
	if (len == 0 || len >= sizeof(buf))
		return GF_EPARSE;
	memcpy(buf, s, len);
	buf[len] = '\0';
	char *end;
	long v = strtol(buf, &end, 10);
	if (*end || v < 0 || v > 1000000)
		return GF_EPARSE;
	*out = (int)v;
	return 0;
}

/* "(IDX:0-1,4)" or "(S:0-1)" or "(IDX:N/A)": the IDX bits. */
static int parse_idx(const char *s, size_t len, uint64_t *idx)
{
	if (len < 2 || strncmp(s, "(IDX:", 5) != 0)
		return 0;
	char buf[512];
	size_t n = len - 6; /* between "(IDX:" and ")" */
	if (len < 6 || n >= sizeof(buf) || s[len - 1] != ')')
		return GF_EPARSE;
	memcpy(buf, s + 5, n);
	buf[n] = '\0';
	if (strcmp(buf, "N/A") == 0 || n == 0)
		return 0;
	struct gf_bitmap b;
	if (gf_bitmap_parse_list(&b, buf) != 0)
		return GF_EPARSE;
	int g;
	gf_bitmap_for_each(g, &b)
	{
		if (g >= GF_SLURM_GPUS_MAX)
			return GF_ERANGE;
		*idx |= UINT64_C(1) << g;
	}
	return 0;
}

/* One entry "gpu:h100:2(IDX:0-1)" of length len. */
static int gres_entry(const char *s, size_t len, int *count, char *type,
		      unsigned tsize, uint64_t *idx)
{
	const char *paren = memchr(s, '(', len);
	size_t head = paren ? (size_t)(paren - s) : len;
	const char *f[4];
	size_t fl[4];
	int nf = 0;
	for (const char *p = s; p < s + head && nf < 4;) {
		const char *c = memchr(p, ':', (size_t)(s + head - p));
		size_t l = c ? (size_t)(c - p) : (size_t)(s + head - p);
		f[nf] = p;
		fl[nf++] = l;
		p += l + 1;
	}
	if (nf == 0 || fl[0] != 3 || strncmp(f[0], "gpu", 3) != 0)
		return 0; /* mps, shard, nic: not GPUs */
	int n = 1, rc = 0;
	const char *t = NULL;
	size_t tl = 0;
	if (nf == 2 && isdigit((unsigned char)f[1][0]))
		rc = parse_count(f[1], fl[1], &n);
	else if (nf == 2)
		t = f[1], tl = fl[1];
	else if (nf >= 3) {
		t = f[1], tl = fl[1];
		rc = parse_count(f[2], fl[2], &n);
	}
	if (rc)
		return rc;
	if (t && tsize && !type[0] && tl < tsize) {
		memcpy(type, t, tl);
		type[tl] = '\0';
	}
	*count += n;
	return paren ? parse_idx(paren, len - head, idx) : 0;
}

int gf_slurm_parse_gres(const char *s, int *count, char *type, unsigned tsize,
			uint64_t *idx)
{
	*count = 0;
	*idx = 0;
	if (tsize)
		type[0] = '\0';
	if (!s || strcmp(s, "(null)") == 0)
		return 0;
	while (*s) {
		const char *p = gf_str_item_end(s, ',', '(', ')');
		int rc =
			gres_entry(s, (size_t)(p - s), count, type, tsize, idx);
		if (rc)
			return rc;
		s = *p ? p + 1 : p;
	}
	return 0;
}

int gf_slurm_parse_tres_gpus(const char *s, int *count, char *type,
			     unsigned tsize)
{
	*count = 0;
	if (tsize)
		type[0] = '\0';
	if (!s)
		return 0;
	for (const char *p = s; *p;) {
		size_t len = strcspn(p, ",;");
		/* "gres:gpu..." (22.05) or "gres/gpu..." (23.02 and later) */
		if (len > 8 && strncmp(p, "gres", 4) == 0 &&
		    (p[4] == ':' || p[4] == '/') &&
		    strncmp(p + 5, "gpu", 3) == 0 &&
		    (p[8] == ':' || p[8] == '=')) {
			char e[128];
			if (len >= sizeof(e))
				return GF_EPARSE;
			memcpy(e, p + 5, len - 5);
			e[len - 5] = '\0';
			for (char *q = e; *q; q++)
				if (*q == '=')
					*q = ':';
			uint64_t idx;
			int n;
			int rc = gf_slurm_parse_gres(e, &n, type, tsize, &idx);
			if (rc)
				return rc;
			*count += n;
		}
		p += len;
		if (*p)
			p++;
	}
	return 0;
}

/* --- scontrol -o ---------------------------------------------------- */

struct kv {
	char *key[FIELDS_MAX], *val[FIELDS_MAX];
	int n;
};

/* A word starting a new Key=: letters, digits, '_' and ':' then '='. */
static bool starts_key(const char *w)
{
	if (!isalpha((unsigned char)*w))
		return false;
	while (isalnum((unsigned char)*w) || *w == '_' || *w == ':' ||
	       *w == '/')
		w++;
	return *w == '=';
}

/* Split a line in place; a value runs until the next Key= word (values
 * such as OS= and Reason= hold blanks). */
static void split_kv(char *line, struct kv *kv)
{
	kv->n = 0;
	char *p = line, *prev_end = NULL;
	while (*p) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		char *w = p, *we = w + strcspn(w, " ");
		if (starts_key(w) && kv->n < FIELDS_MAX) {
			if (prev_end)
				*prev_end = '\0';
			char *eq = strchr(w, '=');
			*eq = '\0';
			kv->key[kv->n] = w;
			kv->val[kv->n++] = eq + 1;
		}
		prev_end = *we ? we : NULL;
		p = we;
	}
	if (prev_end)
		*prev_end = '\0';
}

static const char *kv_get(const struct kv *kv, const char *key)
{
	for (int i = 0; i < kv->n; i++)
		if (strcmp(kv->key[i], key) == 0)
			return kv->val[i];
	return NULL;
}

static int kv_int(const struct kv *kv, const char *key, int *out)
{
	const char *v = kv_get(kv, key);
	if (!v)
		return GF_ENOTFOUND;
	char *end;
	long x = strtol(v, &end, 10);
	if (end == v || x < 0 || x > 100000000)
		return GF_EPARSE;
	*out = (int)x;
	return 0;
}

static bool unusable_state(const char *st)
{
	return strstr(st, "DOWN") || strstr(st, "DRAIN") ||
	       strstr(st, "NOT_RESPONDING") || strstr(st, "FAIL") ||
	       strstr(st, "INVAL") || strstr(st, "FUTURE");
}

/* v (NULL: "") into a field; -1 with why said when it does not fit. */
static int field(char *dst, size_t cap, const char *key, const char *v,
		 char *why, size_t size)
{
	if (gf_fmt(dst, cap, "%s", v ? v : "") == 0)
		return 0;
	gf_note(why, size, "field '%s' longer than %zu bytes", key, cap - 1);
	return -1;
}

static int node_of(const struct kv *kv, struct gf_slurm_node *n, char *why,
		   size_t size)
{
	memset(n, 0, sizeof(*n));
	const char *v = kv_get(kv, "NodeName");
	if (field(n->name, sizeof(n->name), "NodeName", v, why, size))
		return -1;
	if (kv_int(kv, "CPUTot", &n->cpus) ||
	    kv_int(kv, "CPUAlloc", &n->cpus_alloc)) {
		gf_note(why, size,
			"field 'CPUTot' or 'CPUAlloc' missing or "
			"not a count");
		return -1;
	}
	int cnt;
	uint64_t idx;
	if (gf_slurm_parse_gres(kv_get(kv, "Gres"), &n->ngpus, n->gpu_type,
				sizeof(n->gpu_type), &idx) ||
	    gf_slurm_parse_gres(kv_get(kv, "GresUsed"), &cnt, NULL, 0,
				&n->used)) {
		gf_note(why, size,
			"field 'Gres' or 'GresUsed' is not a GRES "
			"list");
		return -1;
	}
	if (n->ngpus > GF_SLURM_GPUS_MAX ||
	    (n->ngpus < 64 && n->used >> n->ngpus)) {
		gf_note(why, size, "GPU indexes past the node's %d GPUs",
			n->ngpus);
		return -1;
	}
	v = kv_get(kv, "Partitions");
	if (field(n->partitions, sizeof(n->partitions), "Partitions", v, why,
		  size))
		return -1;
	v = kv_get(kv, "State");
	n->unusable = unusable_state(v ? v : "UNKNOWN");
	/* shown only: a long state ("IDLE+CLOUD+POWERED_DOWN+...") is
	 * judged above in full */
	gf_note(n->state, sizeof(n->state), "%s", v ? v : "UNKNOWN");
	return 0;
}

static int job_of(const struct kv *kv, struct gf_slurm_job *j, char *why,
		  size_t size)
{
	memset(j, 0, sizeof(*j));
	const char *st = kv_get(kv, "JobState");
	if (!st || (strcmp(st, "PENDING") && strcmp(st, "RUNNING")))
		return 1; /* not kept */
	j->pending = strcmp(st, "PENDING") == 0;
	int id = 0, cpus = 0, prio = 0;
	if (kv_int(kv, "JobId", &id) || kv_int(kv, "NumCPUs", &cpus)) {
		gf_note(why, size,
			"field 'JobId' or 'NumCPUs' missing or "
			"not a number");
		return -1;
	}
	kv_int(kv, "Priority", &prio);
	j->id = (uint32_t)id;
	j->priority = (uint32_t)prio;
	j->nodes = 1;
	kv_int(kv, "NumNodes", &j->nodes); /* "1" or "1-2": the first */
	if (j->nodes < 1)
		j->nodes = 1;
	j->cpus_per_node = (cpus + j->nodes - 1) / j->nodes;
	const char *v = kv_get(kv, "Partition");
	if (field(j->partition, sizeof(j->partition), "Partition", v, why,
		  size))
		return -1;
	v = kv_get(kv, "NodeList");
	if (field(j->nodelist, sizeof(j->nodelist), "NodeList",
		  v && strcmp(v, "(null)") ? v : "", why, size))
		return -1;
	int n = 0;
	if (gf_slurm_parse_tres_gpus(kv_get(kv, "TresPerNode"), &n, j->gpu_type,
				     sizeof(j->gpu_type)) == 0 &&
	    n > 0) {
		j->gpus_per_node = n;
	} else if (gf_slurm_parse_tres_gpus(kv_get(kv, "TresPerJob"), &n,
					    j->gpu_type,
					    sizeof(j->gpu_type)) == 0 &&
		   n > 0) {
		j->gpus_per_node = (n + j->nodes - 1) / j->nodes;
	}
	return 0;
}

static int read_file(struct gf_slurm_snapshot *s, const char *path, bool jobs,
		     struct gf_err *e)
{
	FILE *f = gf_file_open(path, "r", 0, e);
	if (!f)
		return e->code;
	char *line = gf_malloc(LINE_MAX_);
	struct kv kv;
	int rc = 0;
	unsigned ln = 0;
	while (rc == 0 && fgets(line, LINE_MAX_, f)) {
		ln++;
		line[strcspn(line, "\r\n")] = '\0';
		if (strncmp(line,
			    jobs ? "JobId=" : "NodeName=", jobs ? 6 : 9) != 0)
			continue; /* "No jobs in the system", blank */
		split_kv(line, &kv);
		char why[200];
		int r;
		if (jobs) {
			struct gf_slurm_job j;
			r = job_of(&kv, &j, why, sizeof(why));
			if (r == 0 && gf_slurm_snapshot_add_job(s, &j) < 0)
				rc = gf_err_set(e, GF_ETOOBIG,
						"'%s':%u: more than %d jobs",
						path, ln, GF_SLURM_JOBS_MAX);
		} else {
			struct gf_slurm_node n;
			r = node_of(&kv, &n, why, sizeof(why));
			if (r == 0 && gf_slurm_snapshot_add_node(s, &n) < 0)
				rc = gf_err_set(e, GF_ETOOBIG,
						"'%s':%u: more than %d nodes",
						path, ln, GF_SLURM_NODES_MAX);
		}
		if (r < 0)
			rc = gf_err_set(e, GF_EPARSE, "'%s':%u: %s", path, ln,
					why);
	}
	gf_free(line);
	fclose(f);
	return rc;
}

int gf_slurm_snapshot_read_scontrol(struct gf_slurm_snapshot *s,
				    const char *nodes_path,
				    const char *jobs_path, struct gf_err *e)
{
	int rc = read_file(s, nodes_path, false, e);
	if (rc == 0 && jobs_path)
		rc = read_file(s, jobs_path, true, e);
	if (rc == 0 && s->nnodes == 0)
		rc = gf_err_set(e, GF_EPARSE,
				"'%s': no NodeName= line (save `scontrol -o "
				"show node` into it)",
				nodes_path);
	gf_note(s->source, sizeof(s->source), "scontrol output");
	return rc;
}
