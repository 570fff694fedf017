/*
 * wire.c - the extender protocol's types (k8s.io/kube-scheduler/
 * extender/v1, types.go) read from kube-scheduler's JSON and written as
 * its Go decoder expects them: keys as the Go field names, every key
 * present, nil as null, a HostPriorityList as a bare array.
 *
 * Reading is strict about the keys it reads (their types; exact case,
 * as Go's encoder writes them) and ignores the others, like Go's
 * decoder.  Invariants: a filter reply names only candidates it was
 * given and never has NodeNames and Nodes both null (kube-scheduler
 * reads that as "every node filtered out").
 */
#include <stdio.h>
#include <string.h>

#include "k8s/k8s.h"
#include "util/fmt.h"
#include "util/mem.h"

/* ---- reading ---------------------------------------------------------- */

static bool is_null(const struct gf_jv *v)
{
	return v == NULL || gf_jv_type(v) == GF_JV_NULL;
}

static int pod_of(const struct gf_jv *v, const struct gf_jv **pod,
		  struct gf_err *e)
{
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "expected a JSON object");
	*pod = gf_jv_get(v, "Pod");
	if (gf_jv_type(*pod) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "'Pod': expected an object");
	return 0;
}

static int names_read(const struct gf_jv *arr, struct gf_k8s_args *a,
		      struct gf_err *e)
{
	if (gf_jv_type(arr) != GF_JV_ARR)
		return gf_err_set(e, GF_EINVAL,
				  "'NodeNames': expected an array or null");
	size_t n = gf_jv_len(arr);
	if (n > GF_K8S_NAMES_MAX)
		return gf_err_set(e, GF_ETOOBIG,
				  "'NodeNames': %zu names, at most %d", n,
				  GF_K8S_NAMES_MAX);
	a->names = gf_calloc(n + 1, sizeof(*a->names));
	for (size_t i = 0; i < n; i++) {
		a->names[i] = gf_jv_str(gf_jv_at(arr, i));
		if (a->names[i] == NULL)
			return gf_err_set(e, GF_EINVAL,
					  "'NodeNames'[%zu]: expected a string",
					  i);
		a->n++;
	}
	return 0;
}

static int nodes_read(const struct gf_jv *list, struct gf_k8s_args *a,
		      struct gf_err *e)
{
	const struct gf_jv *items = gf_jv_get(list, "items");
	if (gf_jv_type(list) != GF_JV_OBJ ||
	    (!is_null(items) && gf_jv_type(items) != GF_JV_ARR))
		return gf_err_set(e, GF_EINVAL,
				  "'Nodes': expected a NodeList or null");
	size_t n = gf_jv_len(items);
	if (n > GF_K8S_NAMES_MAX)
		return gf_err_set(e, GF_ETOOBIG, "'Nodes': %zu, at most %d", n,
				  GF_K8S_NAMES_MAX);
	a->node_objects = true;
	a->names = gf_calloc(n + 1, sizeof(*a->names));
	a->nodes = gf_calloc(n + 1, sizeof(*a->nodes));
	for (size_t i = 0; i < n; i++) {
		const struct gf_jv *it = gf_jv_at(items, i);
		a->names[i] =
			gf_jv_str(gf_jv_get(gf_jv_get(it, "metadata"), "name"));
		a->nodes[i] = it;
		if (a->names[i] == NULL)
			return gf_err_set(e, GF_EINVAL,
					  "'Nodes'.items[%zu]: expected "
					  "metadata.name",
					  i);
		a->n++;
	}
	return 0;
}

int gf_k8s_args_read(const struct gf_jv *v, struct gf_k8s_args *a,
		     struct gf_err *e)
{
	memset(a, 0, sizeof(*a));
	int rc = pod_of(v, &a->pod, e);
	if (rc)
		return rc;
	const struct gf_jv *names = gf_jv_get(v, "NodeNames");
	const struct gf_jv *nodes = gf_jv_get(v, "Nodes");
	if (!is_null(names))
		rc = names_read(names, a, e);
	else if (!is_null(nodes))
		rc = nodes_read(nodes, a, e);
	else
		a->names = gf_calloc(1, sizeof(*a->names));
	return rc;
}

void gf_k8s_args_release(struct gf_k8s_args *a)
{
	gf_free(a->names);
	gf_free(a->nodes);
	gf_free(a->own);
	gf_free(a->len);
	memset(a, 0, sizeof(*a));
}

/* ---- ExtenderArgs from text: plain names read in place --------------- */

/*
 * Only the top level of the text is followed here, by bracket counting
 * with strings skipped whole; the text's validity stays jansson's to
 * judge.  For valid JSON that view is exact, and an array of plain
 * strings replaced with "[]" leaves a valid document of the same tree
 * but for that member; a text jansson then refuses is parsed again as
 * it came, for its own message.
 */

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* Past the string that starts at p (a '"'), or NULL. */
static const char *skip_str(const char *p, const char *end)
{
	for (p++; p < end; p++) {
		if (*p == '\\')
			p++;
		else if (*p == '"')
			return p + 1;
	}
	return NULL;
}

/* Past the value that starts at p, or NULL. */
static const char *skip_value(const char *p, const char *end)
{
	if (p < end && *p == '"')
		return skip_str(p, end);
	if (p < end && *p != '{' && *p != '[') { /* a number or a literal */
		while (p < end && !strchr(",}] \t\n\r", *p))
			p++;
		return p;
	}
	int depth = 0;
	while (p < end) {
		if (*p == '"') {
			p = skip_str(p, end);
			if (!p)
				return NULL;
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if ((*p == '}' || *p == ']') && --depth == 0)
			return p + 1;
		p++;
	}
	return NULL;
}

/* A byte a plain name may hold: printable ASCII, no '"' nor '\\'. */
static bool plain(char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* The array of plain names at p (its '['), read in one pass over a copy
 * of [p, end) (and 8 NULs: a name may be read 8 bytes at a time): each
 * name ended by a NUL where its closing quote was, into x->names (x->n
 * of them, their lengths in x->len; x->own the copy), *to past the ']'.
 * false (x untouched) when it is anything else: a value not a string,
 * a byte not plain (an escape: jansson reads those), or more than
 * GF_K8S_NAMES_MAX names. */
static bool names_scan(struct gf_k8s_args *x, const char *p, const char *end,
		       const char **to)
{
	size_t len = (size_t)(end - p), n = 0, cap = len / 16 + 16;
	char *own = gf_malloc(len + 8), *q = own + 1, *e = own + len;
	const char **names = gf_reallocarray(NULL, cap, sizeof(*names));
	uint32_t *lens = gf_reallocarray(NULL, cap, sizeof(*lens));
	memcpy(own, p, len);
	memset(own + len, 0, 8); /* not plain: ends a name's run */
	q = q + (skip_ws(q, e) - q);
	while (q < e && *q != ']') {
		if (*q != '"' || n == GF_K8S_NAMES_MAX)
			goto refuse;
		char *name = ++q;
		while (plain(*q))
			q++;
		if (q == e || *q != '"')
			goto refuse;
		*q = '\0';
		if (n == cap) {
			cap *= 2;
			names = gf_reallocarray(names, cap, sizeof(*names));
			lens = gf_reallocarray(lens, cap, sizeof(*lens));
		}
		lens[n] = (uint32_t)(q - name);
		names[n++] = name;
		q = q + (skip_ws(q + 1, e) - q);
		if (q < e && *q == ',') {
			q = q + (skip_ws(q + 1, e) - q);
			if (q < e && *q == ']') /* "[\"a\",]" */
				goto refuse;
		} else if (q == e || *q != ']') {
			goto refuse;
		}
	}
	if (q == e)
		goto refuse;
	*to = p + (q + 1 - own);
	x->names = names;
	x->n = (int)n;
	x->own = own;
	x->own_len = (size_t)(q + 1 - own); /* the array's bytes */
	x->len = lens;
	return true;
refuse:
	gf_free(lens);
	gf_free(names);
	gf_free(own);
	return false;
}

/* Where the top-level "NodeNames" value is in s: [*from, *to), an array
 * of plain strings, read into x (names_scan); false when there is none
 * such. */
static bool names_span(const char *s, size_t len, const char **from,
		       const char **to, struct gf_k8s_args *x)
{
	static const char key[] = "\"NodeNames\"";
	const char *end = s + len, *p = skip_ws(s, end);
	if (p == end || *p != '{')
		return false;
	p = skip_ws(p + 1, end);
	while (p < end && *p == '"') {
		const char *k = p;
		p = skip_str(p, end);
		if (!p)
			return false;
		bool ours = (size_t)(p - k) == sizeof(key) - 1 &&
			    !memcmp(k, key, sizeof(key) - 1);
		p = skip_ws(p, end);
		if (p == end || *p != ':')
			return false;
		p = skip_ws(p + 1, end);
		if (ours) {
			*from = p;
			return *p == '[' && names_scan(x, p, end, to);
		}
		p = skip_value(p, end);
		if (!p)
			return false;
		p = skip_ws(p, end);
		if (p == end || *p != ',')
			return false;
		p = skip_ws(p + 1, end);
	}
	return false;
}

int gf_k8s_args_parse(const char *s, size_t len, struct gf_jv **root,
		      struct gf_k8s_args *a, struct gf_err *e)
{
	memset(a, 0, sizeof(*a));
	const char *from = NULL, *to = NULL;
	struct gf_k8s_args x = { 0 };
	if (!names_span(s, len, &from, &to, &x)) {
		int rc = gf_jv_parse(s, len, root, e);
		return rc ? rc : gf_k8s_args_read(*root, a, e);
	}
	size_t head = (size_t)(from - s), tail = len - (size_t)(to - s);
	char *t = gf_malloc(head + 2 + tail);
	memcpy(t, s, head);
	memcpy(t + head, "[]", 2);
	memcpy(t + head + 2, to, tail);
	int rc = gf_jv_parse(t, head + 2 + tail, root, e);
	gf_free(t);
	if (rc) { /* read as it came: its own message */
		gf_k8s_args_release(&x);
		rc = gf_jv_parse(s, len, root, e);
		return rc ? rc : gf_k8s_args_read(*root, a, e);
	}
	rc = gf_k8s_args_read(*root, a, e);
	if (rc == 0) { /* the plain names in place of "[]"'s none */
		gf_free(a->names);
		a->names = x.names;
		a->n = x.n;
		a->own = x.own;
		a->own_len = x.own_len;
		a->len = x.len;
	} else {
		gf_k8s_args_release(&x);
	}
	return rc;
}

static int field(const struct gf_jv *v, const char *key, char *out, size_t size,
		 bool required, struct gf_err *e)
{
	const struct gf_jv *x = gf_jv_get(v, key);
	const char *s = gf_jv_str(x);
	out[0] = '\0';
	if (s == NULL && !required && is_null(x))
		return 0;
	if (s == NULL || (required && !*s) || gf_fmt(out, size, "%s", s)) {
		out[0] = '\0';
		return gf_err_set(e, GF_EINVAL,
				  "'%s': expected a string of %s to %zu bytes",
				  key, required ? "1" : "0", size - 1);
	}
	return 0;
}

int gf_k8s_bind_args_read(const struct gf_jv *v, struct gf_k8s_bind_args *a,
			  struct gf_err *e)
{
	memset(a, 0, sizeof(*a));
	if (gf_jv_type(v) != GF_JV_OBJ)
		return gf_err_set(e, GF_EINVAL, "expected a JSON object");
	int rc = field(v, "PodName", a->pod, sizeof(a->pod), true, e);
	if (rc == 0)
		rc = field(v, "PodNamespace", a->ns, sizeof(a->ns), false, e);
	if (rc == 0 && !a->ns[0])
		rc = gf_fmt(a->ns, sizeof(a->ns), "default");
	if (rc == 0)
		rc = field(v, "PodUID", a->uid, sizeof(a->uid), false, e);
	if (rc == 0)
		rc = field(v, "Node", a->node, sizeof(a->node), true, e);
	return rc;
}

/* One node's victims: MetaVictims ({UID}) or Victims (pods). */
static int victims_read(const char *node, const struct gf_jv *x, bool meta,
			struct gf_k8s_victims *out, struct gf_err *e)
{
	out->node = node;
	const struct gf_jv *pods = gf_jv_get(x, "Pods");
	if (gf_jv_type(x) != GF_JV_OBJ ||
	    (!is_null(pods) && gf_jv_type(pods) != GF_JV_ARR))
		return gf_err_set(e, GF_EINVAL,
				  "victims of node '%.64s': expected {Pods, "
				  "NumPDBViolations}",
				  node);
	size_t n = gf_jv_len(pods);
	if (n > GF_K8S_NAMES_MAX)
		return gf_err_set(e, GF_ETOOBIG, "victims of '%.64s': too many",
				  node);
	out->uids = gf_calloc(n + 1, sizeof(*out->uids));
	for (size_t i = 0; i < n; i++) {
		const struct gf_jv *p = gf_jv_at(pods, i);
		const char *uid =
			meta ? gf_jv_str(gf_jv_get(p, "UID"))
			     : gf_jv_str(gf_jv_get(gf_jv_get(p, "metadata"),
						   "uid"));
		if (uid == NULL)
			return gf_err_set(e, GF_EINVAL,
					  "victims of node '%.64s': pod %zu "
					  "without %s",
					  node, i,
					  meta ? "UID" : "metadata.uid");
		out->uids[out->n++] = uid;
	}
	int64_t pdb = 0;
	const struct gf_jv *np = gf_jv_get(x, "NumPDBViolations");
	if (!is_null(np) && !gf_jv_int(np, &pdb))
		return gf_err_set(e, GF_EINVAL,
				  "victims of '%.64s': NumPDBViolations: "
				  "expected an integer",
				  node);
	out->pdb = pdb;
	return 0;
}

int gf_k8s_preempt_args_read(const struct gf_jv *v,
			     struct gf_k8s_preempt_args *a, struct gf_err *e)
{
	memset(a, 0, sizeof(*a));
	int rc = pod_of(v, &a->pod, e);
	if (rc)
		return rc;
	const struct gf_jv *m = gf_jv_get(v, "NodeNameToMetaVictims");
	bool meta = !is_null(m);
	if (!meta)
		m = gf_jv_get(v, "NodeNameToVictims");
	if (is_null(m))
		return 0;
	if (gf_jv_type(m) != GF_JV_OBJ)
		return gf_err_set(
			e, GF_EINVAL, "'%s': expected an object or null",
			meta ? "NodeNameToMetaVictims" : "NodeNameToVictims");
	size_t n = gf_jv_len(m);
	if (n > GF_K8S_NAMES_MAX)
		return gf_err_set(e, GF_ETOOBIG, "too many nodes");
	a->v = gf_calloc(n + 1, sizeof(*a->v));
	void *it = NULL;
	const struct gf_jv *x;
	const char *node;
	while ((node = gf_jv_next(m, &it, &x)) != NULL) {
		rc = victims_read(node, x, meta, &a->v[a->n], e);
		a->n++;
		if (rc)
			return rc;
	}
	return 0;
}

void gf_k8s_preempt_args_release(struct gf_k8s_preempt_args *a)
{
	for (int i = 0; a->v && i < a->n; i++)
		gf_free(a->v[i].uids);
	gf_free(a->v);
	memset(a, 0, sizeof(*a));
}

/* ---- writing ---------------------------------------------------------- */

void gf_k8s_jv_write(struct gf_json *j, const char *key, const struct gf_jv *v)
{
	int64_t i;
	double d;
	bool b;
	void *it = NULL;
	const struct gf_jv *x;
	const char *k;
	switch (gf_jv_type(v)) {
	case GF_JV_NULL:
		gf_json_null(j, key);
		break;
	case GF_JV_BOOL:
		gf_jv_bool(v, &b);
		gf_json_bool(j, key, b);
		break;
	case GF_JV_INT:
		gf_jv_int(v, &i);
		gf_json_int(j, key, i);
		break;
	case GF_JV_REAL:
		gf_jv_num(v, &d);
		gf_json_double(j, key, d);
		break;
	case GF_JV_STR:
		gf_json_str(j, key, gf_jv_str(v));
		break;
	case GF_JV_ARR:
		gf_json_arr_begin(j, key);
		for (size_t n = 0; n < gf_jv_len(v); n++)
			gf_k8s_jv_write(j, NULL, gf_jv_at(v, n));
		gf_json_arr_end(j);
		break;
	case GF_JV_OBJ:
		gf_json_obj_begin(j, key);
		while ((k = gf_jv_next(v, &it, &x)) != NULL)
			gf_k8s_jv_write(j, k, x);
		gf_json_obj_end(j);
		break;
	}
}

static void failed_map(struct gf_json *j, const char *key,
		       const struct gf_k8s_args *a,
		       const struct gf_k8s_verdict *v, enum gf_k8s_kind kind)
{
	gf_json_obj_begin(j, key);
	for (int i = 0; v && i < a->n; i++)
		if (v[i].kind == kind)
			gf_json_str(j, a->names[i], v[i].why);
	gf_json_obj_end(j);
}

/* At least the bytes of a's names summed: own's size when they were
 * read in place, else counted. */
static size_t names_bound(const struct gf_k8s_args *a)
{
	if (a->own)
		return a->own_len;
	size_t sum = 0;
	for (int i = 0; i < a->n; i++)
		sum += strlen(a->names[i]);
	return sum;
}

/* Name s copied to q between quotes when it is plain (every byte
 * plain(): nothing to escape): past it; else NULL. */
static char *put_plain(char *q, const char *s)
{
	*q++ = '"';
	for (; *s; s++) {
		if (!plain(*s))
			return NULL;
		*q++ = *s;
	}
	*q++ = '"';
	return q;
}

/* Name k of a between quotes at q (8 bytes to spare past what it
 * writes): past it; NULL when it needs escaping (the writer's).  Names
 * read in place are plain and their lengths known: copied 8 bytes at a
 * time (own has 8 to spare past its last name). */
static char *put_name(char *q, const struct gf_k8s_args *a, int k)
{
	if (!a->len)
		return put_plain(q, a->names[k]);
	const char *s = a->names[k];
	uint32_t n = a->len[k];
	*q++ = '"';
	for (uint32_t c = 0; c < n; c += 8)
		memcpy(q + c, s + c, 8);
	q += n;
	*q++ = '"';
	return q;
}

/* s (n bytes) at q: past it. */
static char *put_at(char *q, const char *s, size_t n)
{
	memcpy(q, s, n);
	return q + n;
}

/* Filter's NodeNames (the names whose verdict fits; all when v is NULL,
 * none when none) as one compact array of plain names, raw under key:
 * kube-scheduler's 5,000 names would cost the indented writer a call
 * each.  false (nothing written) when a name needs escaping. */
static bool names_compact(struct gf_json *j, const char *key,
			  const struct gf_k8s_args *a,
			  const struct gf_k8s_verdict *v, bool none)
{
	char *t = gf_malloc(names_bound(a) + 3 * (size_t)a->n + 11), *q = t;
	*q++ = '[';
	for (int i = 0; !none && q && i < a->n; i++) {
		if (v && v[i].kind != GF_K8S_FITS)
			continue;
		if (q > t + 1)
			*q++ = ',';
		q = put_name(q, a, i);
	}
	if (!q) { /* a name to escape: the writer's */
		gf_free(t);
		return false;
	}
	*q++ = ']';
	gf_json_raw(j, key, t, (size_t)(q - t));
	gf_free(t);
	return true;
}

void gf_k8s_filter_write(struct gf_json *j, const struct gf_k8s_args *a,
			 const struct gf_k8s_verdict *v, const char *error)
{
	bool err = error && *error;
	gf_json_obj_begin(j, NULL);
	if (a->node_objects) {
		gf_json_obj_begin(j, "Nodes");
		gf_json_obj_begin(j, "metadata");
		gf_json_obj_end(j);
		gf_json_arr_begin(j, "items");
		for (int i = 0; !err && i < a->n; i++)
			if (!v || v[i].kind == GF_K8S_FITS)
				gf_k8s_jv_write(j, NULL, a->nodes[i]);
		gf_json_arr_end(j);
		gf_json_obj_end(j);
		gf_json_null(j, "NodeNames");
	} else {
		gf_json_null(j, "Nodes");
		if (!names_compact(j, "NodeNames", a, v, err)) {
			gf_json_arr_begin(j, "NodeNames");
			for (int i = 0; !err && i < a->n; i++)
				if (!v || v[i].kind == GF_K8S_FITS)
					gf_json_str(j, NULL, a->names[i]);
			gf_json_arr_end(j);
		}
	}
	failed_map(j, "FailedNodes", a, err ? NULL : v, GF_K8S_NO_ROOM);
	failed_map(j, "FailedAndUnresolvableNodes", a, err ? NULL : v,
		   GF_K8S_NEVER);
	gf_json_str(j, "Error", err ? error : "");
	gf_json_obj_end(j);
}

/* A HostPriorityList of plain names as one compact run of text, written
 * with memcpy into a buffer sized for it and appended to the writer
 * once: kube-scheduler's 5,000 names cost the indented writer five
 * calls a node.  false (nothing written) when a name needs escaping or
 * the list is not the whole document. */
static bool priorities_compact(struct gf_json *j, const struct gf_k8s_args *a,
			       const int64_t *score)
{
	static const char host[] = "{\"Host\":\"", sc[] = ",\"Score\":";
	if (j->depth != 0)
		return false;
	/* per name: ,{"Host":"NAME","Score":-N} with N of up to 20 digits */
	char *t = gf_malloc(names_bound(a) + 48 * (size_t)a->n + 11), *q = t;
	*q++ = '[';
	for (int i = 0; q && i < a->n; i++) {
		char tmp[24], *end = tmp + sizeof(tmp), *d = end;
		int64_t v = score ? score[i] : 0;
		uint64_t m = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
		do {
			*--d = (char)('0' + m % 10);
			m /= 10;
		} while (m);
		if (v < 0)
			*--d = '-';
		if (i)
			*q++ = ',';
		q = put_at(q, host,
			   sizeof(host) - 2); /* its '"': put_plain's */
		q = put_name(q, a, i);
		if (!q)
			break;
		q = put_at(q, sc, sizeof(sc) - 1);
		q = put_at(q, d, (size_t)(end - d));
		*q++ = '}';
	}
	if (!q) { /* a name to escape: the writer's */
		gf_free(t);
		return false;
	}
	*q++ = ']';
	gf_json_raw(j, NULL, t, (size_t)(q - t));
	gf_free(t);
	return true;
}

void gf_k8s_priorities_write(struct gf_json *j, const struct gf_k8s_args *a,
			     const int64_t *score)
{
	if (priorities_compact(j, a, score))
		return;
	gf_json_arr_begin(j, NULL);
	for (int i = 0; i < a->n; i++) {
		gf_json_obj_begin(j, NULL);
		gf_json_str(j, "Host", a->names[i]);
		gf_json_int(j, "Score", score ? score[i] : 0);
		gf_json_obj_end(j);
	}
	gf_json_arr_end(j);
}

void gf_k8s_bind_result_write(struct gf_json *j, const char *error)
{
	gf_json_obj_begin(j, NULL);
	gf_json_str(j, "Error", error ? error : "");
	gf_json_obj_end(j);
}

void gf_k8s_preempt_write(struct gf_json *j,
			  const struct gf_k8s_preempt_args *a, const int *keep,
			  int *const *pick)
{
	gf_json_obj_begin(j, NULL);
	gf_json_obj_begin(j, "NodeNameToMetaVictims");
	for (int k = 0; k < a->n; k++) {
		if (keep[k] < 0)
			continue;
		const struct gf_k8s_victims *x = &a->v[k];
		gf_json_obj_begin(j, x->node);
		gf_json_arr_begin(j, "Pods");
		for (int i = 0; i < keep[k]; i++) {
			gf_json_obj_begin(j, NULL);
			gf_json_str(j, "UID", x->uids[pick[k][i]]);
			gf_json_obj_end(j);
		}
		gf_json_arr_end(j);
		gf_json_int(j, "NumPDBViolations", x->pdb);
		gf_json_obj_end(j);
	}
	gf_json_obj_end(j);
	gf_json_obj_end(j);
}
