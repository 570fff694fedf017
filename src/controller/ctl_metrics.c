/*
 * ctl_metrics.c - the controller's /metrics page, Prometheus text 0.0.4,
 * promtool-clean (HELP and TYPE for every family, base units, counters
 * ending in _total).  Rendered under the core's lock, on request.
 */
#include <string.h>

#include "controller/service_impl.h"

static void family(struct gf_buf *b, const char *name, const char *type,
		   const char *help)
{
	gf_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name,
		      type);
}

/* One family per class and team of the pending jobs: their count, or
 * (gpus) the GPUs they ask for. */
static void pending_by(struct gf_service *s, struct gf_buf *b, const char *name,
		       const char *help, bool gpus)
{
	const struct gf_ctl_config *cfg = gf_ctl_config(s->ctl);
	int nteams = gf_ctl_nteams(s->ctl);
	family(b, name, "gauge", help);
	for (int c = 0; c < cfg->nclasses; c++)
		for (int t = 0; t < nteams; t++) {
			int64_t milli;
			int n = gf_ctl_pending_by(s->ctl, c, t, &milli);
			if (n <= 0)
				continue;
			gf_buf_printf(b, "%s{class=\"%s\",team=\"%s\"} ", name,
				      cfg->classes[c].name,
				      gf_ctl_team_name(s->ctl, t));
			if (gpus)
				gf_buf_printf(b, "%.3f\n",
					      (double)milli / 1000.0);
			else
				gf_buf_printf(b, "%d\n", n);
		}
}

/* Per class and team: pending jobs and their GPU demand. */
static void pending(struct gf_service *s, struct gf_buf *b)
{
	pending_by(s, b, "gpufleet_queue_pending_jobs",
		   "Jobs waiting to start, by class and team: the queue depth.",
		   false);
	pending_by(s, b, "gpufleet_queue_pending_gpus",
		   "GPUs the waiting jobs ask for (shares and MIG instances "
		   "as fractions), by class and team.",
		   true);
}

static void histogram(struct gf_buf *b, const char *name, const char *help,
		      const uint64_t *count, double sum)
{
	family(b, name, "histogram", help);
	uint64_t cum = 0;
	for (int k = 0; k < GF_SERVE_LAT_BUCKETS; k++) {
		cum += count[k];
		gf_buf_printf(b, "%s_bucket{le=\"%g\"} %llu\n", name,
			      gf_serve_lat_bounds[k], (unsigned long long)cum);
	}
	cum += count[GF_SERVE_LAT_BUCKETS];
	gf_buf_printf(b,
		      "%s_bucket{le=\"+Inf\"} %llu\n%s_sum %.6f\n"
		      "%s_count %llu\n",
		      name, (unsigned long long)cum, name, sum, name,
		      (unsigned long long)cum);
}

static void latency(struct gf_service *s, struct gf_buf *b)
{
	histogram(b, "gpufleet_submit_to_placed_seconds",
		  "Time from a job's submission to its first placement.",
		  s->lat_count, s->lat_sum);
	histogram(b, "gpufleet_submit_to_running_seconds",
		  "Time from a job's submission to its agent running its "
		  "first replica (agents only).",
		  s->run_count, s->run_sum);
}

/* Nodes by state, and each unhealthy GPU with its node and UUID (a
 * series only while it is unhealthy: the count stays small). */
static void nodes(struct gf_service *s, struct gf_buf *b)
{
	int ready = 0, notready = 0, sick = 0;
	const struct gf_cluster *c = gf_ctl_cluster(s->ctl);
	for (int i = 0, n = gf_ctl_nnodes(s->ctl); i < n; i++) {
		if (strcmp(gf__agents_state(s->ag, i), "ready") == 0)
			ready++;
		else
			notready++;
	}
	family(b, "gpufleet_nodes", "gauge",
	       "Nodes by state: ready, or not (silent, or not yet called).");
	gf_buf_printf(b,
		      "gpufleet_nodes{state=\"ready\"} %d\n"
		      "gpufleet_nodes{state=\"notready\"} %d\n",
		      ready, notready);
	uint64_t quick, repeat, slow;
	gf__agents_heartbeats(s->ag, &quick, &repeat, &slow);
	family(b, "gpufleet_agent_heartbeats_total", "counter",
	       "Node agents' heartbeats answered: on arrival when nothing "
	       "changed (quick: read and checked; repeat: the same bytes as "
	       "the node's last quick one), or by the scheduler's turn.");
	gf_buf_printf(b,
		      "gpufleet_agent_heartbeats_total{path=\"quick\"} %llu\n"
		      "gpufleet_agent_heartbeats_total{path=\"repeat\"} %llu\n"
		      "gpufleet_agent_heartbeats_total{path=\"turn\"} %llu\n",
		      (unsigned long long)quick, (unsigned long long)repeat,
		      (unsigned long long)slow);
	uint64_t here, turn;
	gf__agents_polls(s->ag, &here, &turn);
	family(b, "gpufleet_agent_polls_total", "counter",
	       "Node agents' long polls for their assignments taken on "
	       "arrival (answered or parked by the handler) or by the "
	       "scheduler's turn (not leading, stopping, or not registered).");
	gf_buf_printf(b,
		      "gpufleet_agent_polls_total{path=\"arrival\"} %llu\n"
		      "gpufleet_agent_polls_total{path=\"turn\"} %llu\n",
		      (unsigned long long)here, (unsigned long long)turn);
	family(b, "gpufleet_gpu_unhealthy", "gauge",
	       "1 for each GPU its agent reports unhealthy (an Xid that "
	       "needs a reset, off the bus, or a transient Xid in its quiet "
	       "period): it gets no new work.");
	for (int i = 0, n = gf_ctl_nnodes(s->ctl); i < n; i++)
		for (int g = 0; g < c->nodes[i].ngpus; g++) {
			if (gf_ctl_gpu_is_healthy(s->ctl, i, g))
				continue;
			const char *uuid = gf__agents_uuid(s->ag, i, g);
			gf_buf_printf(b,
				      "gpufleet_gpu_unhealthy{node=\"%s\","
				      "gpu=\"%d\",UUID=\"%s\"} 1\n",
				      c->names[i], g, uuid ? uuid : "");
			sick++;
		}
	family(b, "gpufleet_gpus_unhealthy", "gauge",
	       "GPUs reported unhealthy, all nodes.");
	gf_buf_printf(b, "gpufleet_gpus_unhealthy %d\n", sick);
}

static void service_metrics(struct gf_service *s, struct gf_buf *b)
{
	family(b, "gpufleet_leader", "gauge",
	       "1 while this server leads (holds the store's lock).");
	gf_buf_printf(b, "gpufleet_leader %d\n", s->leading ? 1 : 0);
	if (!s->leading)
		return;
	struct gf_ctl_stats st;
	gf_ctl_stats(s->ctl, &st);
	pending(s, b);
	family(b, "gpufleet_jobs", "gauge", "Jobs by state.");
	gf_buf_printf(b,
		      "gpufleet_jobs{state=\"pending\"} %d\n"
		      "gpufleet_jobs{state=\"running\"} %d\n",
		      st.pending, st.running);
	family(b, "gpufleet_gpus", "gauge",
	       "GPUs of the cluster: allocated (to running jobs, shares and "
	       "MIG instances as fractions) and idle.");
	gf_buf_printf(b,
		      "gpufleet_gpus{state=\"allocated\"} %.3f\n"
		      "gpufleet_gpus{state=\"idle\"} %.3f\n",
		      (double)st.gpus_alloc_milli / 1000.0,
		      (double)(st.gpus_total_milli - st.gpus_alloc_milli) /
			      1000.0);
	family(b, "gpufleet_fragmentation_gpus", "gauge",
	       "Idle GPU the typical job could not use (the FGD measure, "
	       "summed over nodes).");
	gf_buf_printf(b, "gpufleet_fragmentation_gpus %.3f\n",
		      st.frag_milli / 1000.0);
	family(b, "gpufleet_mig_instances", "gauge",
	       "MIG instances of the nodes, used and free.");
	gf_buf_printf(b,
		      "gpufleet_mig_instances{state=\"used\"} %d\n"
		      "gpufleet_mig_instances{state=\"free\"} %d\n",
		      st.mig_used, st.mig_total - st.mig_used);
	nodes(s, b);
	gf__service_feature_metrics(s, b); /* the extender's families */
	latency(s, b);
	family(b, "gpufleet_submissions_total", "counter",
	       "Job submissions answered, by result.");
	gf_buf_printf(b,
		      "gpufleet_submissions_total{result=\"accepted\"} %llu\n"
		      "gpufleet_submissions_total{result=\"rejected\"} %llu\n",
		      (unsigned long long)s->submitted,
		      (unsigned long long)s->rejected);
	family(b, "gpufleet_node_reports_ignored_total", "counter",
	       "Run reports a node sent for a replica not placed on it.");
	gf_buf_printf(b, "gpufleet_node_reports_ignored_total %llu\n",
		      (unsigned long long)s->foreign_reports);
	family(b, "gpufleet_store_transactions_total", "counter",
	       "Transactions written to the store (each one a group commit).");
	gf_buf_printf(b, "gpufleet_store_transactions_total %llu\n",
		      (unsigned long long)s->write_batches);
	struct gf_server_stats hs = { 0 };
	if (s->srv) /* NULL only before its start returned */
		gf_server_stats(s->srv, &hs);
	family(b, "gpufleet_http_held", "gauge",
	       "Requests held now (long polls, requests waiting for their "
	       "turn's commit).");
	gf_buf_printf(b, "gpufleet_http_held %llu\n",
		      (unsigned long long)hs.held);
	family(b, "gpufleet_http_resumed_total", "counter",
	       "Held requests answered: connections resumed, each once.");
	gf_buf_printf(b, "gpufleet_http_resumed_total %llu\n",
		      (unsigned long long)hs.resumed);
}

int gf__metrics_get(struct gf_http_req *r, void *arg)
{
	struct gf_service *s = ((struct gf_call *)arg)->s;
	struct gf_buf b;
	gf_buf_init(&b, 8u << 20);
	pthread_mutex_lock(&s->ctl_lock);
	service_metrics(s, &b);
	pthread_mutex_unlock(&s->ctl_lock);
	int rc = gf_buf_error(&b)
			 ? gf_reply_error(r, 500, "too-big",
					  "the page is over 8 MiB")
			 : gf_reply(r, 200,
				    "text/plain; version=0.0.4; charset=utf-8",
				    gf_buf_str(&b), b.len);
	gf_buf_release(&b);
	return rc;
}
