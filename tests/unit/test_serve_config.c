/*
 * test_serve_config.c - the controller's YAML config and the node table
 * it builds: what a good file gives, and one clear file:line error for
 * each kind of mistake.
 */
#include <sys/stat.h>

#include "controller/config.h"
#include "helpers.h"
#include "server/auth.h"
#include "util/buf.h"
#include "util/mem.h"

static char path[64];

static void write_file(const char *text)
{
	snprintf(path, sizeof(path), "/tmp/gf-serve-XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	ssize_t len = (ssize_t)strlen(text);
	assert_int_equal(write(fd, text, (size_t)len), len);
	close(fd);
}

static const char good[] =
	"# a small cluster\n"
	"policy: bestfit\n"
	"open_teams: false\n"
	"classes:\n"
	"  - {name: inference, priority: 200}\n"
	"  - {name: batch, priority: 10, preemptible: true, max_runtime_s: "
	"3600}\n"
	"teams:\n"
	"  - name: vision\n"
	"    weight: 2\n"
	"    quota: {gpus: {h100-80gb: 16, \"*\": 24}, mig: {1g.10gb: 14}, "
	"milli: 4000}\n"
	"  - name: speech\n"
	"pools:\n"
	"  - name: h100\n"
	"    nodes: 3\n"
	"    model: h100-80gb\n"
	"    gpus: 8\n"
	"    cpu_milli: 224000\n"
	"    memory_mib: 2097152\n"
	"    labels: {tier: train, zone: a}\n"
	"    block: nvl-a\n"
	"    mig: {gpus: [6, 7], layout: {1g.10gb: 7}}\n"
	"  - name: l4\n"
	"    nodes: [edge-1, edge-2]\n"
	"    model: l4\n"
	"    gpus: 1\n"
	"    cpu_milli: 32000\n"
	"    memory_mib: 131072\n"
	"blocks:\n"
	"  - {name: edge, nodes: [edge-2]}\n"
	"labels:\n"
	"  - {nodes: [edge-1], labels: {zone: b}}\n";

static void test_good_config(void **state)
{
	(void)state;
	write_file(good);
	struct gf_serve_config cfg;
	gf_serve_config_defaults(&cfg);
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_serve_config_read(path, &cfg, &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(cfg.ctl.policy, GF_POLICY_BESTFIT);
	assert_false(cfg.ctl.open_teams);
	assert_int_equal(cfg.ctl.nclasses, 2);
	assert_true(cfg.ctl.classes[1].preemptible);
	assert_int_equal(cfg.ctl.classes[1].max_runtime_s, 3600);
	assert_int_equal(cfg.ctl.nteams, 2);
	const struct gf_ctl_team *t = &cfg.ctl.teams[0];
	assert_true(t->weight == 2.0);
	assert_int_equal(t->ngpus, 2);
	assert_string_equal(t->gpus[1].what, "*");
	assert_int_equal(t->gpus[1].limit, 24);
	assert_int_equal(t->mig[0].limit, 14);
	assert_int_equal(t->milli, 4000);
	assert_false(cfg.ctl.teams[1].has_quota);
	assert_int_equal(cfg.ctl.teams[1].milli, -1);
	assert_false(cfg.allow_root); /* the default: jobs never as root */

	struct gf_cluster c;
	struct gf_ctl_node *nodes;
	rc = gf_serve_build_nodes(&cfg, NULL, &c, &nodes, &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(c.n, 5);
	assert_string_equal(c.names[0], "h100-0000");
	assert_string_equal(c.names[4], "edge-2");
	assert_string_equal(nodes[1].labels, "tier=train,zone=a");
	assert_string_equal(nodes[3].labels, "zone=b");
	assert_string_equal(cfg.ctl.blocks[nodes[0].block], "nvl-a");
	assert_string_equal(cfg.ctl.blocks[nodes[4].block], "edge");
	assert_int_equal(nodes[3].block, 0); /* the default block */
	/* 7 x 1g.10gb on GPUs 6 and 7 of each H100 node */
	assert_int_equal(nodes[2].nmig, 14);
	assert_int_equal(nodes[2].mig[13].gpu, 7);
	assert_string_equal(nodes[2].mig[0].profile, "1g.10gb");
	assert_int_equal(nodes[4].nmig, 0);
	gf_free(nodes);
	gf_cluster_release(&c);
	gf_serve_config_release(&cfg);
	unlink(path);
}

struct bad {
	const char *text;
	const char *msg;
};

static void test_bad_configs(void **state)
{
	(void)state;
	static const struct bad cases[] = {
		{ "policy: fastest\n", ":1: key 'policy': unknown 'fastest'" },
		{ "polcy: fgd\n", ":1: config: unknown key 'polcy'" },
		{ "classes:\n  - {name: a}\n",
		  ":2: key 'classes': a class named 'batch' is required" },
		{ "classes: [{name: batch, priority: high}]\n",
		  "key 'priority': expected a whole number" },
		{ "teams: [{name: a}, {name: a}]\n", "team 'a' given twice" },
		{ "teams: [{name: a, quota: {gpus: {h100: -1}}}]\n",
		  "key 'quota.gpus': expected a whole number from 0" },
		{ "teams: [{name: a, quota: {cpu: 3}}]\n",
		  "quota: unknown key 'cpu'" },
		{ "pools: [{name: p}]\n",
		  "pool 'p': key 'nodes' (a count or names) is required" },
		{ "pools: [{name: p, nodes: 2, gpus: 8}]\n",
		  "pool 'p': key 'model' is required" },
		{ "pools: [{name: p, nodes: 2, mig: {gpus: [0]}}]\n",
		  "'mig' needs both 'gpus' and 'layout'" },
		{ "open_teams: maybe\n",
		  "key 'open_teams': expected true or false" },
		{ "pools: [{name: p, nodes: 2, labels: {a: 'x=y'}}]\n",
		  "a label must be a plain key: value" },
		{ "teams: [\n", "malformed YAML" },
		{ "allow_root: yes-please\n",
		  "key 'allow_root': expected true or false" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(cases[i].text);
		struct gf_serve_config cfg;
		gf_serve_config_defaults(&cfg);
		struct gf_err e;
		gf_err_clear(&e);
		int rc = gf_serve_config_read(path, &cfg, &e);
		if (rc == 0 || !strstr(e.msg, cases[i].msg) ||
		    !strstr(e.msg, path))
			print_message("case %zu: rc %d '%s'\n", i, rc, e.msg);
		assert_true(rc < 0);
		assert_non_null(strstr(e.msg, cases[i].msg));
		assert_non_null(strstr(e.msg, path));
		gf_serve_config_release(&cfg);
		unlink(path);
	}
	/* allow_root: true, the one way jobs may run as root (issue 21) */
	write_file("allow_root: true\n");
	struct gf_serve_config cfg;
	gf_serve_config_defaults(&cfg);
	struct gf_err e;
	assert_int_equal(gf_serve_config_read(path, &cfg, &e), 0);
	assert_true(cfg.allow_root);
	gf_serve_config_release(&cfg);
	unlink(path);
}

/* Errors found while building the nodes. */
static void test_bad_nodes(void **state)
{
	(void)state;
	static const struct bad cases[] = {
		{ "pools: [{name: p, nodes: 1, model: h100-80gb, gpus: 8, "
		  "mig: {gpus: [0], layout: {9g.99gb: 1}}}]\n",
		  "'9g.99gb' is not a MIG profile of h100-80gb" },
		{ "pools: [{name: p, nodes: 1, model: h100-80gb, gpus: 8, "
		  "mig: {gpus: [0], layout: {7g.80gb: 2}}}]\n",
		  "does not fit one h100-80gb" },
		{ "pools: [{name: p, nodes: 1, model: l4, gpus: 1, "
		  "mig: {gpus: [0], layout: {1g.10gb: 1}}}]\n",
		  "model 'l4' has no MIG profiles" },
		{ "pools: [{name: p, nodes: [a, a]}]\n",
		  "node name 'a' given twice" },
		{ "pools: [{name: p, nodes: [a]}]\nblocks: [{name: b, nodes: "
		  "[z]}]\n",
		  ":2: no node named 'z'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(cases[i].text);
		struct gf_serve_config cfg;
		gf_serve_config_defaults(&cfg);
		struct gf_err e;
		gf_err_clear(&e);
		assert_int_equal(gf_serve_config_read(path, &cfg, &e), 0);
		struct gf_cluster c;
		struct gf_ctl_node *nodes;
		int rc = gf_serve_build_nodes(&cfg, NULL, &c, &nodes, &e);
		if (rc == 0 || !strstr(e.msg, cases[i].msg))
			print_message("case %zu: rc %d '%s'\n", i, rc, e.msg);
		assert_true(rc < 0);
		assert_non_null(strstr(e.msg, cases[i].msg));
		gf_serve_config_release(&cfg);
		unlink(path);
	}
}

/* A CSV in the simulator's format, with labels and blocks by name; pools
 * and a CSV together are refused; no config at all: the built-in
 * cluster in one block. */
static void test_csv_and_defaults(void **state)
{
	(void)state;
	char csv[64];
	snprintf(csv, sizeof(csv), "/tmp/gf-serve-csv-XXXXXX");
	int fd = mkstemp(csv);
	const char *rows = "sn,cpu_milli,memory_mib,gpu,model\n"
			   "n1,64000,262144,8,A100\nn2,64000,262144,8,A100\n"
			   "n3,32000,131072,0,\n";
	assert_int_equal(write(fd, rows, strlen(rows)), (ssize_t)strlen(rows));
	close(fd);
	write_file("blocks: [{name: r1, nodes: [n1, n2]}]\n"
		   "labels: [{nodes: [n3], labels: {role: cpu}}]\n");
	struct gf_serve_config cfg;
	gf_serve_config_defaults(&cfg);
	struct gf_err e;
	assert_int_equal(gf_serve_config_read(path, &cfg, &e), 0);
	struct gf_cluster c;
	struct gf_ctl_node *nodes;
	assert_int_equal(gf_serve_build_nodes(&cfg, csv, &c, &nodes, &e), 0);
	assert_int_equal(c.n, 3);
	assert_string_equal(cfg.ctl.blocks[nodes[0].block], "r1");
	assert_int_equal(nodes[0].block, nodes[1].block);
	assert_int_equal(nodes[2].block, 0);
	assert_string_equal(nodes[2].labels, "role=cpu");
	gf_free(nodes);
	gf_cluster_release(&c);
	gf_serve_config_release(&cfg);
	unlink(path);

	write_file("pools: [{name: p, nodes: 1}]\n");
	gf_serve_config_defaults(&cfg);
	assert_int_equal(gf_serve_config_read(path, &cfg, &e), 0);
	assert_int_equal(gf_serve_build_nodes(&cfg, csv, &c, &nodes, &e),
			 GF_EINVAL);
	assert_non_null(strstr(e.msg, "with a node CSV"));
	gf_serve_config_release(&cfg);
	unlink(path);
	unlink(csv);

	gf_serve_config_defaults(&cfg);
	assert_int_equal(gf_serve_build_nodes(&cfg, NULL, &c, &nodes, &e), 0);
	assert_true(c.n > 100);
	assert_int_equal(cfg.ctl.nblocks, 1);
	assert_int_equal(cfg.ctl.policy, GF_POLICY_FGD);
	assert_string_equal(cfg.ctl.classes[2].name, "batch");
	gf_free(nodes);
	gf_cluster_release(&c);
	gf_serve_config_release(&cfg);
}

/*
 * Quota keys and selectors that name no GPU model warn (issue 22, GFD):
 * a key no node's model is and the catalog resolves to no model (by id,
 * alias, NVML name or GFD product).  Nodes from a CSV of trace models
 * (V100M32, a model the catalog lacks: MYGPU) and h100-sxm: h100-80gb
 * (the catalog's alias of h100-sxm), V100M32 and MYGPU (nodes have
 * them), b200 (a catalog model no node has yet: agents may bring it) and
 * "*" are silent; h100-80g and tpu warn.  With no node (agents mode at
 * start-up) MYGPU warns too.
 */
static void test_model_warnings(void **state)
{
	(void)state;
	char csv[64];
	snprintf(csv, sizeof(csv), "/tmp/gf-serve-csv-XXXXXX");
	int fd = mkstemp(csv);
	const char *rows = "sn,cpu_milli,memory_mib,gpu,model\n"
			   "n1,64000,262144,8,V100M32\n"
			   "n2,64000,262144,8,h100-sxm\n"
			   "n3,64000,262144,8,MYGPU\n";
	assert_int_equal(write(fd, rows, strlen(rows)), (ssize_t)strlen(rows));
	close(fd);
	write_file("teams:\n"
		   "  - name: ml\n"
		   "    quota:\n"
		   "      gpus: {h100-80gb: 2, \"*\": 4, V100M32: 1,\n"
		   "             h100-80g: 1, b200: 1, MYGPU: 1, tpu: 3}\n");
	struct gf_serve_config cfg;
	gf_serve_config_defaults(&cfg);
	struct gf_err e;
	assert_int_equal(gf_serve_config_read(path, &cfg, &e), 0);
	struct gf_cluster c;
	struct gf_ctl_node *nodes;
	assert_int_equal(gf_serve_build_nodes(&cfg, csv, &c, &nodes, &e), 0);
	char why[GF_ERR_MSG_MAX], want[GF_ERR_MSG_MAX];
	assert_int_equal(gf_serve_model_warnings(&cfg, &c, why, sizeof(why)),
			 2);
	snprintf(want, sizeof(want),
		 "%s:5: team 'ml': quota.gpus 'h100-80g': no node has that GPU "
		 "model and it is no catalog model's id, alias, NVML name or "
		 "GFD product: the entry matches no node",
		 path);
	assert_string_equal(why, want);
	assert_false(gf_serve_model_unknown(&c, "MYGPU"));
	/* a job's selector on GFD's product key */
	char model[64];
	assert_false(gf_serve_selector_unknown(
		&c, "zone=a,nvidia.com/gpu.product=Tesla-V100-SXM2-32GB", model,
		sizeof(model)));
	assert_true(gf_serve_selector_unknown(
		&c, "zone=a,nvidia.com/gpu.product=H100-80G", model,
		sizeof(model)));
	assert_string_equal(model, "H100-80G");
	assert_false(gf_serve_selector_unknown(
		&c, "x.nvidia.com/gpu.product=H100-80G", model, sizeof(model)));
	assert_false(
		gf_serve_selector_unknown(&c, "zone=a", model, sizeof(model)));
	gf_free(nodes);
	gf_cluster_release(&c);
	/* no node yet: only the catalog resolves */
	gf_cluster_init(&c);
	assert_int_equal(gf_serve_model_warnings(&cfg, &c, why, sizeof(why)),
			 3);
	assert_true(gf_serve_model_unknown(&c, "MYGPU"));
	assert_false(gf_serve_model_unknown(&c, "NVIDIA-B200"));
	gf_cluster_release(&c);
	gf_serve_config_release(&cfg);
	unlink(path);
	unlink(csv);
}

/* Every placement policy is one the controller can run, FGD+ included;
 * an unknown one lists them all. */
static void test_policies(void **state)
{
	(void)state;
	struct gf_serve_config cfg;
	struct gf_err e;
	for (int i = 0; i < GF_POLICY_COUNT; i++) {
		char text[64];
		snprintf(text, sizeof(text), "policy: %s\n",
			 gf_policy_name((enum gf_policy)i));
		write_file(text);
		gf_serve_config_defaults(&cfg);
		assert_int_equal(gf_serve_config_read(path, &cfg, &e), 0);
		assert_int_equal(cfg.ctl.policy, i);
		gf_serve_config_release(&cfg);
	}
	write_file("policy: fgdplus\n");
	gf_serve_config_defaults(&cfg);
	assert_int_equal(gf_serve_config_read(path, &cfg, &e), 0);
	assert_int_equal(cfg.ctl.policy, GF_POLICY_FGDPLUS);
	gf_serve_config_release(&cfg);
	write_file("policy: fgdplus\nfgdplus_t: 900\n");
	gf_serve_config_defaults(&cfg);
	assert_int_equal(gf_serve_config_read(path, &cfg, &e), 0);
	assert_true(cfg.ctl.fgdplus_t == 900.0);
	gf_serve_config_release(&cfg);
	write_file("fgdplus_t: 0\n");
	gf_serve_config_defaults(&cfg);
	assert_int_equal(gf_serve_config_read(path, &cfg, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "fgdplus_t"));
	gf_serve_config_release(&cfg);
	write_file("policy: fgd++\n");
	gf_serve_config_defaults(&cfg);
	assert_int_equal(gf_serve_config_read(path, &cfg, &e), GF_EPARSE);
	assert_non_null(strstr(e.msg, "fgd, fgdplus)"));
	gf_serve_config_release(&cfg);
	unlink(path);
}

/* The token file: roles, bearer checks, every kind of bad line. */
static void test_tokens(void **state)
{
	(void)state;
	write_file("# tokens\n"
		   "aaaaaaaaaaaaaaaa1 admin\n"
		   "bbbbbbbbbbbbbbbb2   team:vision  # the vision team\n"
		   "cccccccccccccccc3 node:gpu-01\n");
	chmod(path, 0600);
	struct gf_auth a;
	struct gf_err e;
	assert_int_equal(gf_auth_read(path, &a, &e), 0);
	assert_int_equal(a.n, 3);
	const struct gf_auth_entry *nx =
		gf_auth_check(&a, "Bearer cccccccccccccccc3");
	assert_non_null(nx);
	assert_false(nx->admin);
	assert_string_equal(nx->node, "gpu-01");
	assert_string_equal(nx->team, "");
	assert_false(a.loose_mode);
	const struct gf_auth_entry *x =
		gf_auth_check(&a, "Bearer bbbbbbbbbbbbbbbb2");
	assert_non_null(x);
	assert_false(x->admin);
	assert_string_equal(x->team, "vision");
	assert_true(gf_auth_check(&a, "Bearer aaaaaaaaaaaaaaaa1")->admin);
	assert_null(gf_auth_check(&a, "Bearer aaaaaaaaaaaaaaaa"));
	assert_null(gf_auth_check(&a, "Bearer aaaaaaaaaaaaaaaa12"));
	assert_null(gf_auth_check(&a, "Basic aaaaaaaaaaaaaaaa1"));
	assert_null(gf_auth_check(&a, NULL));
	assert_string_equal(gf_auth_token_for(&a, false, "vision"),
			    "bbbbbbbbbbbbbbbb2");
	assert_null(gf_auth_token_for(&a, false, "speech"));
	gf_auth_release(&a);
	unlink(path);
	static const struct bad cases[] = {
		{ "short admin\n", ":1: a token is 16 to 256 characters" },
		{ "aaaaaaaaaaaaaaaa1\n", ":1: expected 'TOKEN admin'" },
		{ "aaaaaaaaaaaaaaaa1 root\n", "role 'root': expected admin" },
		{ "aaaaaaaaaaaaaaaa1 node:\n", "expected admin, team:NAME or "
					       "node:NAME" },
		{ "aaaaaaaaaaaaaaa\"1 admin\n", "only letters, digits" },
		{ "aaaaaaaaaaaaaaaa1 admin\naaaaaaaaaaaaaaaa1 team:x\n",
		  ":2: a token given twice" },
		{ "# nothing\n", "no token in the file" },
		/* issue 21: user:LOGIN after admin or team:NAME only */
		{ "aaaaaaaaaaaaaaaa1 node:n1 user:alice\n",
		  ":1: 'user:alice': expected user:LOGIN after admin or "
		  "team:NAME" },
		{ "aaaaaaaaaaaaaaaa1 team:x usr:alice\n", "'usr:alice'" },
		{ "aaaaaaaaaaaaaaaa1 team:x user:\n", "'user:'" },
		{ "aaaaaaaaaaaaaaaa1 team:x user:-rf\n", "'user:-rf'" },
		{ "aaaaaaaaaaaaaaaa1 team:x user:a/b\n", "'user:a/b'" },
		{ "aaaaaaaaaaaaaaaa1 team:x "
		  "user:abcdefghijabcdefghijabcdefghijabc\n",
		  "LOGIN 1 to 32" },
		{ "aaaaaaaaaaaaaaaa1 team:x user:a b\n", ":1: expected 'TOKEN "
							 "admin'" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(cases[i].text);
		int rc = gf_auth_read(path, &a, &e);
		if (rc == 0 || !strstr(e.msg, cases[i].msg))
			print_message("case %zu: %d '%s'\n", i, rc, e.msg);
		assert_true(rc < 0);
		assert_non_null(strstr(e.msg, cases[i].msg));
		unlink(path);
	}
	/* a token line naming the user its jobs run as (issue 21) */
	write_file("aaaaaaaaaaaaaaaa1 admin user:ops\n"
		   "bbbbbbbbbbbbbbbb2 team:vision user:alice.b_1$\n"
		   "cccccccccccccccc3 team:vision\n");
	assert_int_equal(gf_auth_read(path, &a, &e), 0);
	assert_int_equal(a.n, 3);
	assert_string_equal(gf_auth_find(&a, "aaaaaaaaaaaaaaaa1")->user, "ops");
	x = gf_auth_find(&a, "bbbbbbbbbbbbbbbb2");
	assert_string_equal(x->team, "vision");
	assert_string_equal(x->user, "alice.b_1$");
	assert_string_equal(gf_auth_find(&a, "cccccccccccccccc3")->user, "");
	gf_auth_release(&a);
	unlink(path);
	write_file("aaaaaaaaaaaaaaaa1 admin\n");
	chmod(path, 0644);
	assert_int_equal(gf_auth_read(path, &a, &e), 0);
	assert_true(a.loose_mode);
	gf_auth_release(&a);
	unlink(path);
}

/* A node's token, 28 characters: "nodetoken-NNNNNN-abcdefghij". */
static void node_token(char *out, size_t size, int i)
{
	snprintf(out, size, "nodetoken-%06d-abcdefghij", i);
}

/* A fleet's token file: 20,000 node tokens (and an admin's) are each
 * found, for their own node; a token one character off (changed, cut,
 * lengthened) is not; the same file with one token given twice is
 * refused naming the second line. */
static void test_tokens_many(void **state)
{
	(void)state;
	enum { N = 20000, DUP_LINE = 12346 };
	struct gf_buf b;
	gf_buf_init(&b, 1u << 20);
	gf_buf_puts(&b, "adminadminadmin0001 admin\n");
	char tok[64];
	for (int i = 0; i < N; i++) {
		node_token(tok, sizeof(tok), i);
		gf_buf_printf(&b, "%s node:node-%05d\n", tok, i);
	}
	assert_int_equal(gf_buf_error(&b), 0);
	write_file(gf_buf_str(&b));
	chmod(path, 0600);
	struct gf_auth a;
	struct gf_err e;
	gf_err_clear(&e);
	int rc = gf_auth_read(path, &a, &e);
	if (rc)
		print_message("%s\n", e.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(a.n, N + 1);
	assert_true(gf_auth_find(&a, "adminadminadmin0001")->admin);
	for (int i = 0; i < N; i++) {
		char node[32], hdr[80];
		node_token(tok, sizeof(tok), i);
		snprintf(node, sizeof(node), "node-%05d", i);
		const struct gf_auth_entry *x = gf_auth_find(&a, tok);
		if (x == NULL || strcmp(x->node, node))
			print_message("token %d: %s\n", i,
				      x ? x->node : "not found");
		assert_non_null(x);
		assert_string_equal(x->node, node);
		assert_false(x->admin);
		snprintf(hdr, sizeof(hdr), "Bearer %s", tok);
		assert_ptr_equal(gf_auth_check(&a, hdr), x);
		/* one character off: changed, cut, one more */
		size_t len = strlen(tok);
		tok[len - 1] = 'k';
		assert_null(gf_auth_find(&a, tok));
		tok[len - 1] = 'j';
		tok[0] = 'N';
		assert_null(gf_auth_find(&a, tok));
		tok[0] = 'n';
		tok[len - 1] = '\0';
		assert_null(gf_auth_find(&a, tok));
		tok[len - 1] = 'j';
		tok[len] = 'j';
		tok[len + 1] = '\0';
		assert_null(gf_auth_find(&a, tok));
	}
	gf_auth_release(&a);
	unlink(path);
	/* line DUP_LINE repeats line 7's token (for another node) */
	gf_buf_reset(&b);
	for (int line = 1; line <= N; line++) {
		node_token(tok, sizeof(tok), line == DUP_LINE ? 7 : line);
		gf_buf_printf(&b, "%s node:node-%05d\n", tok, line);
	}
	assert_int_equal(gf_buf_error(&b), 0);
	write_file(gf_buf_str(&b));
	rc = gf_auth_read(path, &a, &e);
	char want[128];
	snprintf(want, sizeof(want), "%s:%d: a token given twice", path,
		 DUP_LINE);
	if (rc == 0 || strcmp(e.msg, want))
		print_message("%d '%s'\n", rc, e.msg);
	assert_int_equal(rc, GF_EPARSE);
	assert_string_equal(e.msg, want);
	assert_null(a.e); /* released */
	unlink(path);
	gf_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good_config),
		cmocka_unit_test(test_bad_configs),
		cmocka_unit_test(test_bad_nodes),
		cmocka_unit_test(test_csv_and_defaults),
		cmocka_unit_test(test_model_warnings),
		cmocka_unit_test(test_policies),
		cmocka_unit_test(test_tokens),
		cmocka_unit_test(test_tokens_many),
	};
	return cmocka_run_group_tests_name("serve-config", tests, NULL, NULL);
}
