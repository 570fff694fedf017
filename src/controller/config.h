/*
 * config.h - `gpufleet serve --config FILE`: the controller's YAML config
 * (node pools and labels, blocks, teams with typed quotas, classes, the
 * placement policy), and the node table it describes.  docs/controller.md
 * has a commented example; every error names file:line and the key.
 *
 *   policy: fgd
 *   open_teams: true          # a team not listed may submit (no quota)
 *   classes:
 *     - {name: inference, priority: 200}
 *     - {name: training, priority: 100}
 *     - {name: batch, priority: 10, preemptible: true, max_runtime_s: 86400}
 *   teams:
 *     - name: vision
 *       weight: 2
 *       quota: {gpus: {h100-sxm: 16, "*": 24}, mig: {1g.10gb: 14}, milli: 4000}
 *   pools:                    # nodes, when no --nodes CSV gives them
 *     - name: h100
 *       nodes: 4              # or a list of names
 *       model: h100-sxm
 *       gpus: 8
 *       cpu_milli: 224000
 *       memory_mib: 2097152
 *       labels: {tier: train}
 *       block: nvl-a
 *       mig: {gpus: [6, 7], layout: {1g.10gb: 7}}
 *   blocks:                   # groups of nodes a gang stays inside
 *     - {name: rack-2, nodes: [node-0007, node-0008]}
 *   labels:                   # labels for nodes of a --nodes CSV
 *     - {nodes: [node-0001], labels: {zone: b}}
 *   agents:                   # nodes that join (gpufleet serve --agents)
 *     heartbeat_s: 2          # how often agents call
 *     notready_after_s: 40    # no heartbeat this long: NotReady (no new
 *                             # work; its jobs keep running)
 *     requeue_after_s: 300    # ... this long: its jobs requeued (and
 *                             # the agent has stopped them by then)
 *     kill_grace_s: 10        # SIGTERM to SIGKILL, as agents apply it
 *     mig_auto_apply: false   # apply proposed MIG layouts on idle GPUs
 *     fence: false            # agents stop their jobs when they cannot
 *                             # reach the controller (never twice)
 *                             # instead of running on (never killed)
 *   chargeback:               # GET /v1/chargeback (docs/chargeback.md)
 *     prices: /etc/gpufleet/prices.yaml
 *     cluster: gpufleet       # the cluster name in its rows
 *   prices:                   # or the prices here: GPU model: per
 *     h100-sxm: 2.50          # GPU-hour (cpu_core, ram_gib, currency,
 *     cpu_core: 0.03          # default too); `chargeback --db --config`
 *                             # reads the same block
 *
 * Without a config: the built-in defaults (gf_serve_config_defaults).
 */
#ifndef GF_CONTROLLER_CONFIG_H
#define GF_CONTROLLER_CONFIG_H

#include <gpufleet/cluster.h>
#include <gpufleet/ctl.h>
#include <gpufleet/err.h>

#define GF_SERVE_MAX_POOLS	 256
#define GF_SERVE_MAX_POOL_NODES	 100000
#define GF_SERVE_CONFIG_MAX	 (4u << 20) /* bytes */
#define GF_SERVE_MAX_ASSIGNMENTS 4096	    /* blocks + label entries */

/* Nodes a pool defines (or, with a CSV, the CSV nodes it names). */
struct gf_serve_pool {
	char name[GF_NODE_NAME_MAX];
	int count; /* nodes pool-0 .. pool-(count-1); 0: names */
	char (*names)[GF_NODE_NAME_MAX];
	int nnames;
	char model[GF_MODEL_NAME_MAX];
	int gpus;
	int32_t cpu_milli;
	int64_t memory_mib;
	char labels[GF_CTL_LABELS_MAX];
	char block[GF_NODE_NAME_MAX]; /* "" default */
	uint32_t mig_gpus;	      /* GPUs in MIG mode (bit = index) */
	int mig_counts[32];	      /* instances per profile of the model */
	char mig_desc[128];	      /* the layout as written, for errors */
	int line;		      /* in the config, for errors */
};

/* A block, or labels, given to nodes by name (for CSV nodes). */
struct gf_serve_assign {
	char block[GF_NODE_NAME_MAX]; /* "" for a labels entry */
	char labels[GF_CTL_LABELS_MAX];
	char (*names)[GF_NODE_NAME_MAX];
	int nnames;
	int line;
};

/* How the controller treats nodes that join (times in ms). */
struct gf_serve_agents {
	int64_t heartbeat_ms;
	int64_t notready_after_ms;
	int64_t requeue_after_ms;
	int64_t kill_grace_ms;
	bool mig_auto_apply;
	bool fence; /* agents stop their jobs when the controller is silent
		       (docs/cluster.md: "never twice" over "never killed") */
	int line;   /* of the section, for errors; 0 none */
};

struct gf_cb_prices; /* chargeback/chargeback.h */

struct gf_serve_config {
	char path[512]; /* the file read, "" for defaults */
	struct gf_serve_agents agents;
	char charge_prices[512];     /* chargeback: prices file, "" none */
	char charge_cluster[64];     /* chargeback: the cluster's name */
	struct gf_cb_prices *prices; /* the prices: block (owned), NULL */
	struct gf_ctl_config ctl;
	struct gf_serve_pool *pools;
	int npools;
	struct gf_serve_assign *assigns;
	int nassigns;
	/* allow_root: a job may run as root on a node (a token whose user
	 * is root, or a job without a user on a node whose agent has no
	 * --default-user and runs as root); false: refused (issue 21) */
	bool allow_root;
};

/* Built-in defaults: FGD; classes inference (200), training (100), batch
 * (10, preemptible); open teams without quotas; one block; agents every
 * 2 s, NotReady after 40 s, requeued after 300 s, 10 s kill grace, MIG
 * auto-apply off. */
void gf_serve_config_defaults(struct gf_serve_config *cfg);

/*
 * Read path over the defaults (keys not given keep them; a list given
 * replaces the default list).  0, or GF_EPARSE / GF_EINVAL / -errno /
 * GF_ETOOBIG with e->msg "PATH:LINE: key 'K': cause".
 */
int gf_serve_config_read(const char *path, struct gf_serve_config *cfg,
			 struct gf_err *e) GF_MUST_CHECK;
void gf_serve_config_release(struct gf_serve_config *cfg);

/*
 * What the config's blocks: and labels: entries give node `name` (a node
 * that joins): its block replaced, its labels added to the agent's (the
 * config's value of a label replaces the agent's).
 */
void gf_serve_config_node(const struct gf_serve_config *cfg, const char *name,
			  char *block, size_t bsize, char *labels,
			  size_t lsize);

/* How long before requeue_after an agent's jobs are already stopped */
#define GF_SERVE_FENCE_MARGIN_MS 5000
/*
 * When an agent that got no answer to its heartbeats stops its jobs (ms
 * after its last answered one): 0 (never) unless the agents section says
 * fence: true; then requeue_after - kill_grace - the margin, so every
 * process is gone before the controller starts the job again elsewhere:
 * a job never runs twice at once, even when a node is cut off rather than
 * dead, at the price of stopping every job in a controller outage longer
 * than that.
 */
int64_t gf_serve_agents_fence_ms(const struct gf_serve_agents *a);

/*
 * The node table: from the CSV at nodes_csv when given (the simulator's
 * format; pools may then only label nodes by name), else from the pools,
 * else the built-in cluster.  Applies blocks and labels, checks names are
 * unique and MIG layouts fit.  Fills c (initialised here) and *nodes
 * (c->n entries, caller frees with gf_free).  Block names are added to
 * cfg->ctl.blocks.
 */
int gf_serve_build_nodes(struct gf_serve_config *cfg, const char *nodes_csv,
			 struct gf_cluster *c, struct gf_ctl_node **nodes,
			 struct gf_err *e) GF_MUST_CHECK;

/*
 * Does name (a quota key, a selector's product) name no GPU model: none
 * of c's nodes has it, and the catalog knows no model by that id, alias,
 * NVML name or GFD product (gf_catalog_lookup)?  A catalog model no node
 * has yet is not unknown: agents may bring it.
 */
bool gf_serve_model_unknown(const struct gf_cluster *c, const char *name);
/*
 * serve's start-up check: each quota.gpus key of cfg that names no model
 * (gf_serve_model_unknown) logged as a warning ("config.yaml: team 'ml':
 * quota.gpus 'h100-80g': no node has that GPU model ...").  Returns how
 * many; the first's message in why ("" when none).
 */
int gf_serve_model_warnings(const struct gf_serve_config *cfg,
			    const struct gf_cluster *c, char *why, size_t size);
/* Does a job's selector ask GFD's product key for a model that names no
 * model (gf_serve_model_unknown)?  Its value in model. */
bool gf_serve_selector_unknown(const struct gf_cluster *c, const char *selector,
			       char *model, size_t size);

#endif
