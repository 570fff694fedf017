/*
 * order.h - internal to src/core/jobs (order.c): the queues (class x
 * team), fair share, the order a pass walks.
 */
#ifndef GF_CORE_JOBS_ORDER_H
#define GF_CORE_JOBS_ORDER_H

#include "core/jobs/ctl_impl.h"

void gf__queue_push(struct gf_ctl *ctl, int jid);
void gf__order_push(struct gf_ctl *ctl, int jid);
void gf__order_sort_classes(struct gf_ctl *ctl);
typedef void (*gf__visit_fn)(struct gf_ctl *ctl, struct gf__pass *ps, int jid);
void gf__order_walk(struct gf_ctl *ctl, struct gf__pass *ps, gf__visit_fn fn);

#endif
