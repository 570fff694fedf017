/*
 * test_yaml.c - util/yaml: the node tree and its lines, malformed text
 * (bad indentation), unknown keys, the typed getters' ranges and
 * messages, duplicate keys (kept: the first one is read), aliases (shared,
 * never copied), the size caps, documents after the first, every
 * document of a multi-document text (gf_yaml_parse_all).
 */
#include <limits.h>

#include "helpers.h"
#include "util/yaml.h"

static struct gf_yaml *load(const char *text, struct gf_err *e)
{
	struct gf_yaml *y = NULL;
	gf_err_clear(e);
	int rc = gf_yaml_parse(text, strlen(text), "t.yaml", 0, &y, e);
	if (rc)
		assert_null(y);
	return y;
}

static void test_tree_and_lines(void **state)
{
	(void)state;
	struct gf_err e;
	struct gf_yaml *y = load("# a comment\n"
				 "name: one\n"
				 "list:\n"
				 "  - 1\n"
				 "  - two\n"
				 "map: {a: x, b: ~}\n"
				 "quoted: \"null\"\n"
				 "empty:\n",
				 &e);
	assert_non_null(y);
	const struct gf_yn *root = gf_yaml_root(y);
	assert_int_equal(gf_yn_type(root), GF_YN_MAP);
	assert_int_equal(gf_yn_len(root), 5);
	assert_int_equal(gf_yn_line(root), 2);
	assert_string_equal(gf_yn_str(gf_yn_get(root, "name")), "one");
	const struct gf_yn *l = gf_yn_get(root, "list");
	assert_int_equal(gf_yn_type(l), GF_YN_SEQ);
	assert_int_equal(gf_yn_len(l), 2);
	assert_int_equal(gf_yn_line(gf_yn_at(l, 1)), 5);
	assert_string_equal(gf_yn_str(gf_yn_at(l, 1)), "two");
	assert_null(gf_yn_at(l, 2));
	assert_null(gf_yn_at(root, 0)); /* a mapping has no items */
	const struct gf_yn *k, *v;
	assert_true(gf_yn_pair(root, 2, &k, &v));
	assert_string_equal(gf_yn_str(k), "map");
	assert_int_equal(gf_yn_line(k), 6);
	assert_false(gf_yn_pair(root, 5, &k, &v));
	assert_false(gf_yn_pair(l, 0, &k, &v)); /* a list has no pairs */
	/* nulls: absent, ~, an empty value; a quoted "null" is a string */
	assert_true(gf_yn_null(gf_yn_get(v, "b")));
	assert_true(gf_yn_null(gf_yn_get(root, "empty")));
	assert_true(gf_yn_null(gf_yn_get(root, "absent")));
	assert_false(gf_yn_null(gf_yn_get(root, "quoted")));
	assert_false(gf_yn_null(v));
	/* NULL everywhere answers none */
	assert_int_equal(gf_yn_type(NULL), GF_YN_NONE);
	assert_int_equal(gf_yn_line(NULL), 0);
	assert_null(gf_yn_str(NULL));
	assert_int_equal(gf_yn_len(NULL), 0);
	gf_yaml_free(y);

	/* lines of an embedded document count from line0 */
	y = NULL;
	assert_int_equal(gf_yaml_parse("a:\n  b: 1\n", 10, "f", 20, &y, &e), 0);
	assert_int_equal(gf_yn_line(gf_yn_get(gf_yaml_root(y), "a")), 22);
	gf_yaml_free(y);
	/* an empty text is a document without a root */
	y = load("", &e);
	assert_non_null(y);
	assert_null(gf_yaml_root(y));
	gf_yaml_free(y);
}

static void test_malformed(void **state)
{
	(void)state;
	struct gf_err e;
	/* bad indentation: c is less indented than b, more than a */
	assert_null(load("a:\n    b: 1\n  c: 2\n", &e));
	assert_int_equal(e.code, GF_EPARSE);
	assert_non_null(strstr(e.msg, "t.yaml:3: malformed YAML: "));
	/* an unclosed flow sequence */
	assert_null(load("x: [1, 2\ny: 3\n", &e));
	assert_non_null(strstr(e.msg, "t.yaml:"));
	assert_non_null(strstr(e.msg, "malformed YAML"));
	/* a tab for indentation */
	assert_null(load("a:\n\tb: 1\n", &e));
	assert_non_null(strstr(e.msg, "t.yaml:2: malformed YAML"));
	/* line0 counts in a parse error's line too */
	struct gf_yaml *y;
	assert_int_equal(gf_yaml_parse("a: [\n", 5, "f", 10, &y, &e),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, "f:12: malformed YAML"));
	/* what follows the first document is not read (as before) */
	y = load("a: 1\n---\nb: 2\n", &e);
	assert_non_null(y);
	assert_non_null(gf_yn_get(gf_yaml_root(y), "a"));
	assert_null(gf_yn_get(gf_yaml_root(y), "b"));
	gf_yaml_free(y);
}

static int count_key(const struct gf_yr *r, const char *key,
		     const struct gf_yn *v, void *obj)
{
	(void)key;
	long long x;
	int rc = gf_yr_int(r, v, key, 0, 9, &x);
	if (rc == 0)
		(*(int *)obj)++;
	return rc;
}

static void test_unknown_keys(void **state)
{
	(void)state;
	struct gf_err e;
	struct gf_yaml *y = load("name: a\nnodes: 1\nnod: 2\n", &e);
	struct gf_yr r = { y, &e };
	const struct gf_yn *root = gf_yaml_root(y);
	assert_int_equal(gf_yr_keys(&r, root, "pool", "name, nodes, nod"), 0);
	assert_int_equal(gf_yr_keys(&r, root, "pool", "name, nodes"),
			 GF_EPARSE);
	assert_string_equal(e.msg, "t.yaml:3: pool: unknown key 'nod' "
				   "(known: name, nodes)");
	assert_int_equal(gf_yr_keys(&r, root, NULL, "name, nodes"), GF_EPARSE);
	assert_string_equal(e.msg, "t.yaml:3: unknown key 'nod' "
				   "(known: name, nodes)");
	/* not a mapping */
	assert_int_equal(gf_yr_keys(&r, gf_yn_get(root, "name"), "pool", "x"),
			 GF_EPARSE);
	assert_string_equal(e.msg, "t.yaml:1: pool: expected a mapping");
	/* a list names whole keys only */
	assert_true(gf_yaml_known("nodes", "name, nodes"));
	assert_true(gf_yaml_known("name", "name, nodes"));
	assert_false(gf_yaml_known("nod", "name, nodes"));
	assert_false(gf_yaml_known("odes", "name, nodes"));
	assert_false(gf_yaml_known("name, nodes", "name, nodes"));
	assert_false(gf_yaml_known("", "name, nodes"));
	/* each: every key to fn, in order, until the first error */
	int n = 0;
	assert_int_equal(
		gf_yr_each(&r, root, "pool", "name, nodes, nod", count_key, &n),
		GF_EPARSE);
	assert_int_equal(n, 0); /* name: a is not 0 to 9 */
	assert_string_equal(e.msg, "t.yaml:1: key 'name': expected a whole "
				   "number from 0 to 9, got 'a'");
	gf_yaml_free(y);
	/* a key that is not a string */
	y = load("[a]: 1\n", &e);
	r.y = y;
	assert_int_equal(gf_yr_keys(&r, gf_yaml_root(y), "pool", "a"),
			 GF_EPARSE);
	assert_string_equal(e.msg, "t.yaml:1: pool: keys are strings");
	gf_yaml_free(y);
}

static void test_getters(void **state)
{
	(void)state;
	struct gf_err e;
	struct gf_yaml *y = load("i: 42\nneg: -7\nbig: 99999999999999999999\n"
				 "f: 2.5\nnan: .nan\nb1: yes\nb2: FALSE\n"
				 "b3: maybe\ns: hello\nl: [1]\n",
				 &e);
	struct gf_yr r = { y, &e };
	const struct gf_yn *root = gf_yaml_root(y);
	long long x;
	assert_int_equal(gf_yr_int(&r, gf_yn_get(root, "i"), "i", 0, 42, &x),
			 0);
	assert_int_equal(x, 42);
	assert_int_equal(gf_yr_int(&r, gf_yn_get(root, "i"), "i", 0, 41, &x),
			 GF_EPARSE);
	assert_string_equal(e.msg, "t.yaml:1: key 'i': expected a whole "
				   "number from 0 to 41, got '42'");
	assert_int_equal(
		gf_yr_int(&r, gf_yn_get(root, "neg"), "neg", -10, 0, &x), 0);
	assert_int_equal(x, -7);
	assert_int_equal(gf_yr_int(&r, gf_yn_get(root, "big"), "big", LLONG_MIN,
				   LLONG_MAX, &x),
			 GF_EPARSE); /* out of range of long long */
	assert_int_equal(gf_yr_int(&r, gf_yn_get(root, "f"), "f", 0, 9, &x),
			 GF_EPARSE);
	assert_int_equal(gf_yr_int(&r, gf_yn_get(root, "l"), "l", 0, 9, &x),
			 GF_EPARSE);
	assert_non_null(strstr(e.msg, "t.yaml:10: key 'l'"));
	assert_int_equal(gf_yr_int(&r, NULL, "gone", 0, 9, &x), GF_EPARSE);
	assert_non_null(strstr(e.msg, "t.yaml:0: key 'gone'"));
	double d;
	assert_int_equal(gf_yr_double(&r, gf_yn_get(root, "f"), "f", 0, 3, &d),
			 0);
	assert_true(d == 2.5);
	assert_int_equal(gf_yr_double(&r, gf_yn_get(root, "f"), "f", 3, 4, &d),
			 GF_EPARSE);
	assert_int_equal(gf_yr_double(&r, gf_yn_get(root, "nan"), "nan", -1e300,
				      1e300, &d),
			 GF_EPARSE);
	bool b = false;
	assert_int_equal(gf_yr_bool(&r, gf_yn_get(root, "b1"), "b1", &b), 0);
	assert_true(b);
	assert_int_equal(gf_yr_bool(&r, gf_yn_get(root, "b2"), "b2", &b), 0);
	assert_false(b);
	assert_int_equal(gf_yr_bool(&r, gf_yn_get(root, "b3"), "b3", &b),
			 GF_EPARSE);
	assert_string_equal(e.msg,
			    "t.yaml:8: key 'b3': expected true or false");
	char s[6];
	assert_int_equal(
		gf_yr_str(&r, gf_yn_get(root, "s"), "s", 1, s, sizeof(s)), 0);
	assert_string_equal(s, "hello");
	assert_int_equal(gf_yr_str(&r, gf_yn_get(root, "s"), "s", 1, s, 5),
			 GF_EPARSE);
	assert_string_equal(e.msg, "t.yaml:9: key 's': expected 1 to 4 "
				   "characters");
	assert_int_equal(
		gf_yr_str(&r, gf_yn_get(root, "l"), "l", 0, s, sizeof(s)),
		GF_EPARSE);
	assert_string_equal(e.msg, "t.yaml:10: key 'l': expected a string");
	gf_yaml_free(y);
}

static void test_duplicates_and_aliases(void **state)
{
	(void)state;
	struct gf_err e;
	/* duplicate keys are kept as libyaml gives them; get reads the first */
	struct gf_yaml *y = load("a: 1\na: 2\n", &e);
	assert_non_null(y);
	assert_int_equal(gf_yn_len(gf_yaml_root(y)), 2);
	assert_string_equal(gf_yn_str(gf_yn_get(gf_yaml_root(y), "a")), "1");
	gf_yaml_free(y);
	/* a billion laughs: each alias is the node it names, shared, so
	 * loading costs what the text does */
	char text[2048];
	size_t len = (size_t)snprintf(text, sizeof(text),
				      "a: &a [x, x, x, x, x, x, x, x, x]\n");
	for (char c = 'b'; c <= 'k'; c++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
					"%c: &%c [*%c, *%c, *%c, *%c, *%c, "
					"*%c, *%c, *%c, *%c]\n",
					c, c, c - 1, c - 1, c - 1, c - 1, c - 1,
					c - 1, c - 1, c - 1, c - 1);
	y = load(text, &e);
	assert_non_null(y);
	const struct gf_yn *k = gf_yn_get(gf_yaml_root(y), "k");
	assert_int_equal(gf_yn_len(k), 9);
	assert_ptr_equal(gf_yn_at(k, 0), gf_yn_at(k, 8));
	assert_ptr_equal(gf_yn_at(k, 0), gf_yn_get(gf_yaml_root(y), "j"));
	gf_yaml_free(y);
}

static void test_size_caps(void **state)
{
	(void)state;
	struct gf_err e;
	struct gf_yaml *y = NULL;
	size_t big = GF_YAML_MAX + 1;
	char *text = malloc(big);
	assert_non_null(text);
	memset(text, ' ', big);
	assert_int_equal(gf_yaml_parse(text, big, "big.yaml", 0, &y, &e),
			 GF_ETOOBIG);
	assert_null(y);
	assert_non_null(strstr(e.msg, "big.yaml"));
	/* just under the cap is read (spaces: an empty document) */
	assert_int_equal(gf_yaml_parse(text, big - 1, "big.yaml", 0, &y, &e),
			 0);
	assert_null(gf_yaml_root(y));
	gf_yaml_free(y);
	free(text);
	/* a file over the reader's cap is refused before parsing */
	char path[] = "/tmp/gf-yaml-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "a: 12345\n", 9), 9);
	close(fd);
	assert_int_equal(gf_yaml_read(path, 8, &y, &e), GF_ETOOBIG);
	assert_null(y);
	assert_int_equal(gf_yaml_read(path, 9, &y, &e), 0);
	assert_string_equal(gf_yaml_name(y), path);
	assert_string_equal(gf_yn_str(gf_yn_get(gf_yaml_root(y), "a")),
			    "12345");
	gf_yaml_free(y);
	unlink(path);
	assert_true(gf_yaml_read(path, 9, &y, &e) < 0); /* gone: its errno */
	assert_null(y);
}

/* Every document of a stream, as a Kubernetes manifest holds several
 * (NVIDIA mig-parted's deployments/container/nvidia-mig-manager-example.yaml:
 * a DaemonSet, RBAC objects, a ConfigMap), each with the file's lines. */
static void test_all_documents(void **state)
{
	(void)state;
	struct gf_err e;
	struct gf_yaml *d[3];
	size_t n = 99;
	static const char text[] = "---\n"
				   "kind: DaemonSet\n"
				   "---\n"
				   "kind: ConfigMap\n"
				   "data:\n"
				   "  config.yaml: |\n"
				   "    version: v1\n";
	assert_int_equal(
		gf_yaml_parse_all(text, strlen(text), "m.yaml", d, 3, &n, &e),
		0);
	assert_int_equal(n, 2);
	assert_string_equal(gf_yn_str(gf_yn_get(gf_yaml_root(d[0]), "kind")),
			    "DaemonSet");
	const struct gf_yn *cm = gf_yaml_root(d[1]);
	assert_int_equal(gf_yn_line(cm), 4);
	assert_int_equal(
		gf_yn_line(gf_yn_get(gf_yn_get(cm, "data"), "config.yaml")), 6);
	assert_string_equal(gf_yaml_name(d[1]), "m.yaml");
	gf_yaml_free(d[0]);
	gf_yaml_free(d[1]);
	/* an empty text has no document; "---" alone one of a null root */
	assert_int_equal(gf_yaml_parse_all("", 0, "m.yaml", d, 3, &n, &e), 0);
	assert_int_equal(n, 0);
	assert_int_equal(gf_yaml_parse_all("---\n", 4, "m.yaml", d, 3, &n, &e),
			 0);
	assert_int_equal(n, 1);
	assert_true(gf_yn_null(gf_yaml_root(d[0])));
	gf_yaml_free(d[0]);
	/* more than max: refused, nothing left to free */
	assert_int_equal(
		gf_yaml_parse_all(text, strlen(text), "m.yaml", d, 1, &n, &e),
		GF_ETOOBIG);
	assert_int_equal(n, 0);
	assert_non_null(strstr(e.msg, "more than 1 YAML documents"));
	/* a malformed second document: its line, nothing left to free */
	static const char bad[] = "a: 1\n---\nb: [\n";
	assert_int_equal(
		gf_yaml_parse_all(bad, strlen(bad), "m.yaml", d, 3, &n, &e),
		GF_EPARSE);
	assert_int_equal(n, 0);
	assert_non_null(strstr(e.msg, "m.yaml:"));
	assert_non_null(strstr(e.msg, "malformed YAML"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree_and_lines),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_getters),
		cmocka_unit_test(test_duplicates_and_aliases),
		cmocka_unit_test(test_size_caps),
		cmocka_unit_test(test_all_documents),
	};
	return cmocka_run_group_tests_name("yaml", tests, NULL, NULL);
}
