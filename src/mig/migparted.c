/*
 * migparted.c - mig-parted YAML through util/yaml (nodes
 * carry their line), with the unmarshaller's rules (reference
 * mig-and-metrics.md 2.1): unknown keys are errors, `devices` is "all" or
 * a list of indexes, mig-devices is required when mig-enabled is true and
 * must be empty when it is false, counts are >= 0 and not all 0.
 */
#include "mig/migparted.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gpufleet/mig.h>

#include "util/fmt.h"
#include "util/mem.h"
#include "util/yaml.h"

typedef struct gf_yr rd_t;
typedef struct gf_yn node_t;

/* Go's strconv.ParseUint(s, 0, 32): a base prefix (0x, 0o, 0b, or a
 * leading 0 for octal) or decimal, '_' between digits when a prefix is
 * there; no sign, no space.  true with *out set. */
static bool go_uint32(const char *s, size_t len, uint32_t *out)
{
	unsigned base = 10;
	size_t i = 0;
	char saw = '^'; /* '^' the start, '0' a digit or a prefix, '_' */
	if (len >= 3 && s[0] == '0' && strchr("xXoObB", s[1])) {
		char c = (char)(s[1] | 0x20);
		base = c == 'x' ? 16 : c == 'o' ? 8 : 2;
		i = 2;
		saw = '0';
	} else if (len >= 2 && s[0] == '0') {
		base = 8;
	}
	uint64_t v = 0;
	bool digit = false;
	for (; i < len; i++) {
		if (s[i] == '_') {
			if (saw != '0')
				return false;
			saw = '_';
			continue;
		}
		char c = (char)(s[i] | 0x20);
		unsigned d = c >= '0' && c <= '9'   ? (unsigned)(c - '0')
			     : c >= 'a' && c <= 'z' ? (unsigned)(c - 'a') + 10
						    : 99;
		if (d >= base)
			return false;
		v = v * base + d;
		if (v > 0xffffffffu)
			return false;
		saw = '0';
		digit = true;
	}
	*out = (uint32_t)v;
	return digit && saw != '_';
}

bool gf_mp_filter_matches(const struct gf_mp_filter *f, uint16_t device,
			  uint16_t vendor, uint32_t subsys)
{
	if (!f->is_id || f->device != device || f->vendor != vendor)
		return false;
	return !f->has_sub || (f->sub_device == (uint16_t)(subsys >> 16) &&
			       f->sub_vendor == (uint16_t)(subsys & 0xffff));
}

/* One device-filter string, as mig-parted reads it: anything is
 * accepted; one that is not "<devicevendor>[:<subdevicevendor>]" matches
 * no GPU (gf_mp_validate says so). */
static int parse_filter_str(const rd_t *r, const node_t *x, const node_t *n,
			    struct gf_mp_entry *en)
{
	size_t len;
	const char *s = gf_yn_scalar(x, &len);
	if (!s || strlen(s) != len)
		return gf_yr_fail(r, x ? x : n,
				  "'device-filter': expected a string or a "
				  "list of strings");
	if (en->nfilters >= GF_MP_MAX_FILTERS)
		return gf_yr_fail(r, n, "more than %d device filters",
				  GF_MP_MAX_FILTERS);
	struct gf_mp_filter *f = &en->filters[en->nfilters++];
	gf_note(f->text, sizeof(f->text), "%s", s);
	f->line = gf_yn_line(x);
	const char *colon = strchr(s, ':');
	size_t first = colon ? (size_t)(colon - s) : len;
	uint32_t id, sub = 0;
	f->is_id = go_uint32(s, first, &id) &&
		   (!colon || (!strchr(colon + 1, ':') &&
			       go_uint32(colon + 1, len - first - 1, &sub)));
	if (!f->is_id)
		return 0;
	f->device = (uint16_t)(id >> 16);
	f->vendor = (uint16_t)(id & 0xffff);
	f->has_sub = colon != NULL;
	f->sub_device = (uint16_t)(sub >> 16);
	f->sub_vendor = (uint16_t)(sub & 0xffff);
	return 0;
}

/* A string (one filter; "" or null: none, every GPU) or a list. */
static int parse_filter(const rd_t *r, const node_t *n, struct gf_mp_entry *en)
{
	if (gf_yn_null(n) || (gf_yn_str(n) && !*gf_yn_str(n)))
		return 0;
	if (gf_yn_type(n) == GF_YN_SCALAR)
		return parse_filter_str(r, n, n, en);
	if (gf_yn_type(n) != GF_YN_SEQ)
		return gf_yr_fail(r, n,
				  "'device-filter': expected a string or a "
				  "list");
	for (size_t i = 0; i < gf_yn_len(n); i++) {
		int rc = parse_filter_str(r, gf_yn_at(n, i), n, en);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_devices(const rd_t *r, const node_t *n, struct gf_mp_entry *en)
{
	const char *s = gf_yn_str(n);
	if (s) {
		if (strcmp(s, "all") != 0)
			return gf_yr_fail(r, n,
					  "'devices': expected \"all\" or a "
					  "list of GPU indexes, got '%s'",
					  s);
		en->all_devices = true;
		return 0;
	}
	if (gf_yn_type(n) != GF_YN_SEQ)
		return gf_yr_fail(r, n,
				  "'devices': expected \"all\" or a list");
	for (size_t i = 0; i < gf_yn_len(n); i++) {
		const node_t *x = gf_yn_at(n, i);
		const char *v = gf_yn_str(x);
		char *end;
		long idx = v ? strtol(v, &end, 10) : -1;
		if (!v || *v == '\0' || *end != '\0' || idx < 0 || idx > 4095)
			return gf_yr_fail(r, x ? x : n,
					  "'devices': '%s' is not a GPU index",
					  v ? v : "?");
		if (en->ndevices >= GF_MP_MAX_DEVICES)
			return gf_yr_fail(r, n, "more than %d devices",
					  GF_MP_MAX_DEVICES);
		en->devices[en->ndevices++] = (int)idx;
	}
	return 0;
}

/* "<N><unit>" of a profile's fields, e.g. "3g": NULL or why not. */
static const char *field_bad(const char *s, size_t len, const char *unit)
{
	size_t u = strlen(unit), i = 0;
	if (len < u || strncmp(s + len - u, unit, u) != 0)
		return unit[0] == 'c'	? "missing 'c' from '%dc'"
		       : unit[1] == 'b' ? "missing 'gb' from '%dgb'"
					: "missing 'g' from '%dg'";
	while (i < len - u && s[i] >= '0' && s[i] <= '9')
		i++;
	return i == 0 || i != len - u ? "malformed number" : NULL;
}

static const char *attrs_bad(const char *a)
{
	if (*a == '\0')
		return "empty attribute in list";
	for (const char *p = a;; p = strchr(p, ',') + 1) {
		size_t n = strcspn(p, ",");
		if (n == 0)
			return "empty attribute in list";
		if (p[0] >= '0' && p[0] <= '9')
			return "attribute begins with a number";
		if (p[0] == '.' || p[n - 1] == '.')
			return "attribute begins/ends with a dot";
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)p[i]) && p[i] != '.')
				return "non alpha-numeric character in "
				       "attribute";
		for (const char *q = a; q < p; q += strcspn(q, ",") + 1)
			if (strcspn(q, ",") == n && !strncmp(q, p, n))
				return "non unique attribute in list";
		if (p[n] == '\0')
			return NULL;
	}
}

/*
 * Is name a MIG profile as go-nvlib's ParseMigProfile reads it (what
 * mig-parted's AssertValidFormat checks)?  "[<C>c.]<G>g.<N>gb" and an
 * optional "+" or "-" list of attributes: letters, digits and dots, not
 * starting with a digit, no dot at either end, unique.  NULL, or why not.
 */
static const char *profile_malformed(const char *name)
{
	if (!*name)
		return "profile is the empty string";
	const char *plus = strchr(name, '+'), *minus = strchr(name, '-');
	if (plus && minus)
		return "it has both '+' and '-' attributes";
	const char *at = plus ? plus : minus;
	size_t len = at ? (size_t)(at - name) : strlen(name);
	const char *d1 = memchr(name, '.', len);
	const char *d2 =
		d1 ? memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - name)) : NULL;
	if (!d1)
		return "expected 2 or 3 fields";
	const char *why = NULL;
	if (d2) {
		why = field_bad(name, (size_t)(d1 - name), "c");
		if (!why)
			why = field_bad(d1 + 1, (size_t)(d2 - d1 - 1), "g");
		if (!why)
			why = field_bad(d2 + 1, len - (size_t)(d2 + 1 - name),
					"gb");
	} else {
		why = field_bad(name, (size_t)(d1 - name), "g");
		if (!why)
			why = field_bad(d1 + 1, len - (size_t)(d1 + 1 - name),
					"gb");
	}
	return why ? why : at ? attrs_bad(at + 1) : NULL;
}

static int parse_mdev(const rd_t *r, const node_t *n, struct gf_mp_entry *en)
{
	if (gf_yn_type(n) != GF_YN_MAP)
		return gf_yr_fail(r, n,
				  "'mig-devices': expected a map of profile "
				  "to count");
	int total = 0;
	const node_t *k, *v;
	for (size_t i = 0; gf_yn_pair(n, i, &k, &v); i++) {
		const char *name = gf_yn_str(k), *cnt = gf_yn_str(v);
		const char *why =
			name ? profile_malformed(name) : "not a string";
		if (why)
			return gf_yr_fail(r, k ? k : n,
					  "'mig-devices': '%s' is a malformed "
					  "MIG profile name: %s (like 1g.10gb, "
					  "1c.2g.20gb or 1g.10gb+me)",
					  name ? name : "?", why);
		if (strlen(name) >= sizeof(en->mdev[0].name))
			return gf_yr_fail(r, k,
					  "'mig-devices': '%.60s...' is "
					  "too long",
					  name);
		char *end;
		long c = cnt ? strtol(cnt, &end, 10) : -1;
		if (!cnt || *cnt == '\0' || *end != '\0' || c < 0 || c > 64)
			return gf_yr_fail(r, v ? v : n,
					  "'mig-devices': count for '%s' must "
					  "be a number from 0 to 64",
					  name);
		if (en->nmdev >= GF_MP_MAX_MDEV)
			return gf_yr_fail(r, n, "more than %d profiles",
					  GF_MP_MAX_MDEV);
		struct gf_mp_mdev *m = &en->mdev[en->nmdev++];
		memcpy(m->name, name, strlen(name) + 1);
		m->count = (int)c;
		m->line = gf_yn_line(k);
		total += (int)c;
	}
	if (en->nmdev > 0 && total == 0)
		return gf_yr_fail(r, n, "'mig-devices': every count is 0");
	return 0;
}

struct entry_ctx {
	struct gf_mp_entry *en;
	bool have_dev, have_en;
	const node_t *mdev;
};

static int entry_field(const rd_t *r, const char *key, const node_t *v,
		       void *obj)
{
	struct entry_ctx *x = obj;
	if (!strcmp(key, "device-filter"))
		return parse_filter(r, v, x->en);
	if (!strcmp(key, "devices")) {
		x->have_dev = true;
		return parse_devices(r, v, x->en);
	}
	if (!strcmp(key, "mig-enabled")) {
		x->have_en = true;
		/* mig-parted's true/false; YAML 1.1's yes/no are not */
		if (!gf_yn_bool(v, &x->en->mig_enabled) ||
		    !strchr("tTfF", *gf_yn_str(v)))
			return gf_yr_fail(r, v,
					  "'mig-enabled': expected true or "
					  "false");
		return 0;
	}
	x->mdev = v;
	return parse_mdev(r, v, x->en);
}

static int parse_entry(const rd_t *r, const node_t *n, struct gf_mp_entry *en)
{
	memset(en, 0, sizeof(*en));
	en->line = gf_yn_line(n);
	if (gf_yn_type(n) != GF_YN_MAP)
		return gf_yr_fail(r, n,
				  "expected a map with devices, mig-enabled, "
				  "mig-devices");
	struct entry_ctx x = { en, false, false, NULL };
	int rc = gf_yr_each(r, n, NULL,
			    "device-filter, devices, mig-enabled, mig-devices",
			    entry_field, &x);
	if (rc)
		return rc;
	if (!x.have_dev)
		return gf_yr_fail(r, n, "missing 'devices'");
	if (!x.have_en)
		return gf_yr_fail(r, n, "missing 'mig-enabled'");
	if (en->mig_enabled && x.mdev == NULL)
		return gf_yr_fail(r, n,
				  "'mig-enabled' is true but 'mig-devices' is "
				  "missing");
	if (!en->mig_enabled && en->nmdev > 0)
		return gf_yr_fail(r, x.mdev,
				  "MIG devices included when "
				  "'mig-enabled' is false");
	return 0;
}

/* One named config: its list of entries. */
static int parse_config(const rd_t *r, const node_t *k, const node_t *v,
			struct gf_mp_config *c)
{
	gf_note(c->name, sizeof(c->name), "%s",
		gf_yn_str(k) ? gf_yn_str(k) : "");
	c->line = gf_yn_line(k);
	gf_note(c->path, sizeof(c->path), "%s", gf_yaml_name(r->y));
	if (gf_yn_type(v) != GF_YN_SEQ || gf_yn_len(v) == 0)
		return gf_yr_fail(r, v,
				  "config '%s': expected a non-empty "
				  "list of entries",
				  c->name);
	c->entries = gf_calloc(gf_yn_len(v), sizeof(*c->entries));
	for (size_t i = 0; i < gf_yn_len(v); i++) {
		int rc = parse_entry(r, gf_yn_at(v, i), &c->entries[c->n++]);
		if (rc)
			return rc;
	}
	return 0;
}

static int parse_root(const rd_t *r, const node_t *root, struct gf_mp_file *f)
{
	if (gf_yn_null(root))
		return 0; /* an empty file: no configs (mig-parted's "Empty") */
	if (gf_yn_type(root) != GF_YN_MAP)
		return gf_yr_fail(r, root,
				  "expected a map with version and "
				  "mig-configs");
	int rc = gf_yr_keys(r, root, NULL, "version, mig-configs");
	if (rc)
		return rc;
	const node_t *vnode = gf_yn_get(root, "version");
	const node_t *configs = gf_yn_get(root, "mig-configs");
	const char *version = gf_yn_str(vnode);
	if (!version)
		return gf_yr_fail(r, root, "missing 'version'");
	if (strcmp(version, "v1") != 0)
		return gf_yr_fail(r, vnode,
				  "unknown version '%s' (expected v1)",
				  version);
	if (!configs)
		return 0; /* `version: v1` alone: no configs, as mig-parted */
	if (gf_yn_type(configs) != GF_YN_MAP || gf_yn_len(configs) == 0)
		return gf_yr_fail(r, configs ? configs : root,
				  "'mig-configs' must be a non-empty map");
	f->configs = gf_calloc(gf_yn_len(configs), sizeof(*f->configs));
	const node_t *k, *v;
	for (size_t i = 0; gf_yn_pair(configs, i, &k, &v); i++) {
		rc = parse_config(r, k, v, &f->configs[f->n++]);
		if (rc)
			return rc;
	}
	return 0;
}

/* A GPU Operator ConfigMap: the mig-parted file is data."config.yaml". */
static const node_t *configmap_payload(const node_t *root)
{
	const char *kind = gf_yn_str(gf_yn_get(root, "kind"));
	if (!kind || strcmp(kind, "ConfigMap"))
		return NULL;
	const node_t *v = gf_yn_get(gf_yn_get(root, "data"), "config.yaml");
	return gf_yn_str(v) ? v : NULL;
}

#define MAX_DOCS 64

/* Of a multi-document manifest, the one document that is a mig-parted
 * config: a ConfigMap holding config.yaml, or a map without `kind`.
 * *doc its index; 0 or an error naming the file. */
static int pick_doc(struct gf_yaml **docs, size_t n, size_t *doc,
		    struct gf_err *e)
{
	size_t found = n;
	for (size_t i = 0; i < n; i++) {
		const node_t *root = gf_yaml_root(docs[i]);
		if (gf_yn_null(root) ||
		    (gf_yn_get(root, "kind") && !configmap_payload(root)))
			continue; /* a DaemonSet, a Role, "---" alone... */
		if (found < n)
			return gf_err_set(
				e, GF_EPARSE,
				"%s:%d: a second mig-parted config (the "
				"first is at line %d): keep one per file",
				gf_yaml_name(docs[i]), gf_yn_line(root),
				gf_yn_line(gf_yaml_root(docs[found])));
		found = i;
	}
	if (found == n)
		return gf_err_set(e, GF_EPARSE,
				  "%s: none of its %zu YAML documents is a "
				  "mig-parted config or a ConfigMap holding "
				  "config.yaml",
				  gf_yaml_name(docs[0]), n);
	*doc = found;
	return 0;
}

int gf_mp_read(const char *path, struct gf_mp_file *f, struct gf_err *e)
{
	memset(f, 0, sizeof(*f));
	if (gf_fmt(f->path, sizeof(f->path), "%s", path))
		return gf_err_set(e, GF_ETOOBIG, "%.80s...: path too long",
				  path);
	struct gf_yaml *docs[MAX_DOCS], *inner = NULL;
	size_t n, doc = 0;
	int rc = gf_yaml_read_all(path, GF_MP_MAX_FILE, docs, MAX_DOCS, &n, e);
	if (rc)
		return rc;
	if (n == 0)
		return 0; /* an empty file: no configs */
	if (n > 1)
		rc = pick_doc(docs, n, &doc, e);
	const node_t *payload = configmap_payload(gf_yaml_root(docs[doc]));
	if (rc == 0 && payload) {
		/* a block scalar: its text starts on the next line */
		size_t len;
		const char *text = gf_yn_scalar(payload, &len);
		rc = gf_yaml_parse(text, len, path, gf_yn_line(payload), &inner,
				   e);
	}
	if (rc == 0) {
		struct gf_yr r = { inner ? inner : docs[doc], e };
		rc = parse_root(&r, gf_yaml_root(r.y), f);
	}
	gf_yaml_free(inner);
	for (size_t i = 0; i < n; i++)
		gf_yaml_free(docs[i]);
	if (rc)
		gf_mp_release(f);
	return rc;
}

void gf_mp_release(struct gf_mp_file *f)
{
	for (int i = 0; i < f->n; i++)
		gf_free(f->configs[i].entries);
	gf_free(f->configs);
	f->n = 0;
}

const struct gf_mp_config *gf_mp_find(const struct gf_mp_file *f,
				      const char *name)
{
	for (int i = 0; i < f->n; i++)
		if (strcmp(f->configs[i].name, name) == 0)
			return &f->configs[i];
	return NULL;
}

/* Does the entry's profile multiset fit model m?  0, or why in msg. */
static int fits(const struct gf_mig_model *m, const struct gf_mp_entry *en,
		char *msg, size_t size)
{
	int counts[GF_MIG_MAX_PROFILES] = { 0 };
	for (int i = 0; i < en->nmdev; i++) {
		int p = gf_mig_profile_find(m, en->mdev[i].name);
		if (p < 0) {
			gf_note(msg, size, "%s has no profile '%s'", m->id,
				en->mdev[i].name);
			return -1;
		}
		counts[p] += en->mdev[i].count;
	}
	struct gf_mig_layout l = { .n = 0 };
	if (gf_mig_place(m, counts, &l) != 0) {
		gf_note(msg, size,
			"these instances do not fit on one %s (memory "
			"slices, allowed starts or maximum counts)",
			m->id);
		return -1;
	}
	return 0;
}

/* Is name a profile of some GPU we know, by table or by name only? */
static bool known_name(const char *name, bool *tabled)
{
	*tabled = false;
	for (int k = 0; k < gf_mig_model_count(); k++)
		*tabled |= gf_mig_profile_find(gf_mig_model_at(k), name) >= 0;
	if (*tabled)
		return true;
	for (int k = 0; k < gf_mig_untabled_count(); k++)
		if (gf_mig_untabled_has(gf_mig_untabled_at(k), name))
			return true;
	return false;
}

static bool has_all(const struct gf_mig_model *m, const struct gf_mp_entry *en)
{
	for (int j = 0; j < en->nmdev; j++)
		if (gf_mig_profile_find(m, en->mdev[j].name) < 0)
			return false;
	return true;
}

/* A GPU without a table here that has every profile of the entry. */
static const struct gf_mig_untabled *
untabled_with_all(const struct gf_mp_entry *en)
{
	for (int k = 0; k < gf_mig_untabled_count(); k++) {
		const struct gf_mig_untabled *u = gf_mig_untabled_at(k);
		bool all = true;
		for (int j = 0; j < en->nmdev && all; j++)
			all = gf_mig_untabled_has(u, en->mdev[j].name);
		if (all)
			return u;
	}
	return NULL;
}

/* A compute-instance form, <C>c.<G>g.<N>gb: its GPU instance is known
 * only after the "<C>c." prefix, which our tables do not list. */
static bool ci_form(const char *name)
{
	const char *c = strchr(name, 'c');
	const char *g = strchr(name, 'g');
	return c && g && c < g;
}

/* An entry with a device filter: checked against each filtered model. */
static int validate_filtered(const struct gf_mp_file *f,
			     const struct gf_mp_config *cfg,
			     const struct gf_mp_entry *en, struct gf_buf *out,
			     int *warnings)
{
	int errors = 0;
	char why[200];
	for (int k = 0; k < en->nfilters; k++) {
		const struct gf_mp_filter *fl = &en->filters[k];
		if (!fl->is_id || fl->vendor != 0x10de) {
			gf_buf_printf(
				out,
				"%s:%d: warning: config '%s': device-filter "
				"'%s' selects no GPU: %s\n",
				f->path, fl->line, cfg->name, fl->text,
				fl->is_id ? "its vendor is not NVIDIA's (10DE)"
					  : "not a device id like 0x20B010DE "
					    "or 0x233010DE:0x16C010DE "
					    "(mig-parted matches no GPU "
					    "with it)");
			(*warnings)++;
			continue;
		}
		const struct gf_mig_model *m = gf_mig_model_by_pci(fl->device);
		if (m) {
			if (fits(m, en, why, sizeof(why))) {
				gf_buf_printf(
					out, "%s:%d: error: config '%s': %s\n",
					f->path, en->line, cfg->name, why);
				errors++;
			}
			continue;
		}
		const struct gf_mig_untabled *u =
			gf_mig_untabled_by_pci(fl->device);
		bool bad = false;
		for (int j = 0; u && j < en->nmdev; j++)
			if (!ci_form(en->mdev[j].name) &&
			    !gf_mig_untabled_has(u, en->mdev[j].name)) {
				gf_buf_printf(out,
					      "%s:%d: error: config '%s': "
					      "'%s' is not a profile of the "
					      "%s (0x%04X10DE)\n",
					      f->path, en->mdev[j].line,
					      cfg->name, en->mdev[j].name,
					      u->name, fl->device);
				errors++;
				bad = true;
			}
		if (bad)
			continue;
		gf_buf_printf(out,
			      "%s:%d: warning: config '%s': no MIG table for "
			      "device 0x%04X10DE%s%s%s: profiles checked for "
			      "%s only\n",
			      f->path, en->line, cfg->name, fl->device,
			      u ? " (" : "", u ? u->name : "", u ? ")" : "",
			      u ? "name" : "form");
		(*warnings)++;
	}
	return errors;
}

/* id added to a list "a, b" of *n (a list too long is cut, marked). */
static void list_add(char *list, size_t size, int *n, const char *id)
{
	size_t len = strlen(list);
	gf_note(list + len, size - len, "%s%s", *n ? ", " : "", id);
	(*n)++;
}

/* An entry without a device filter: every model that has its profiles. */
static int validate_unfiltered(const struct gf_mp_file *f,
			       const struct gf_mp_config *cfg,
			       const struct gf_mp_entry *en, struct gf_buf *out,
			       int *warnings)
{
	int errors = 0;
	bool any_ci = false;
	for (int j = 0; j < en->nmdev; j++) {
		bool tabled;
		if (ci_form(en->mdev[j].name)) {
			any_ci = true;
			continue;
		}
		if (!known_name(en->mdev[j].name, &tabled)) {
			gf_buf_printf(out,
				      "%s:%d: error: config '%s': '%s' is a "
				      "profile of no GPU gpufleet knows "
				      "(neither its tables nor the names "
				      "NVIDIA's configs use)\n",
				      f->path, en->mdev[j].line, cfg->name,
				      en->mdev[j].name);
			errors++;
		}
	}
	if (errors)
		return errors;
	char ok[400] = "", bad[400] = "", why[200] = "";
	int nok = 0, nbad = 0;
	for (int k = 0; k < gf_mig_model_count(); k++) {
		const struct gf_mig_model *m = gf_mig_model_at(k);
		if (!has_all(m, en))
			continue;
		if (fits(m, en, why, sizeof(why)) == 0) {
			list_add(ok, sizeof(ok), &nok, m->id);
		} else {
			list_add(bad, sizeof(bad), &nbad, m->id);
		}
	}
	const struct gf_mig_untabled *u = untabled_with_all(en);
	if (nok > 0 && nbad > 0) {
		gf_buf_printf(out,
			      "%s:%d: note: config '%s': valid on %s only; "
			      "these instances do not fit on one %s (memory "
			      "slices, allowed starts or maximum counts)\n",
			      f->path, en->line, cfg->name, ok, bad);
	} else if (nok == 0 && (any_ci || u)) {
		gf_buf_printf(out,
			      "%s:%d: warning: config '%s': %s%s%s: checked "
			      "for %s only\n",
			      f->path, en->line, cfg->name,
			      any_ci ? "compute-instance profiles"
				     : "profiles of ",
			      any_ci ? "" : u->name,
			      any_ci ? "" : " (no MIG table in gpufleet)",
			      any_ci ? "form" : "name");
		(*warnings)++;
	} else if (nok == 0 && nbad > 0) {
		gf_buf_printf(out,
			      "%s:%d: error: config '%s': no MIG-capable GPU "
			      "model can hold these instances together "
			      "(tried: %s)\n",
			      f->path, en->line, cfg->name, bad);
		errors++;
	} else if (nok == 0) {
		gf_buf_printf(out,
			      "%s:%d: error: config '%s': no GPU model has "
			      "all of these profiles\n",
			      f->path, en->line, cfg->name);
		errors++;
	}
	return errors;
}

int gf_mp_validate(const struct gf_mp_file *f, struct gf_buf *out,
		   int *warnings)
{
	int errors = 0;
	*warnings = 0;
	for (int c = 0; c < f->n; c++) {
		const struct gf_mp_config *cfg = &f->configs[c];
		for (int i = 0; i < cfg->n; i++) {
			const struct gf_mp_entry *en = &cfg->entries[i];
			if (!en->mig_enabled || en->nmdev == 0)
				continue;
			errors += en->nfilters > 0
					  ? validate_filtered(f, cfg, en, out,
							      warnings)
					  : validate_unfiltered(f, cfg, en, out,
								warnings);
		}
	}
	return errors;
}
