/*
 * skel_obs.h - the wall between the world and SkeletonHunter.
 *
 * The world (skel_world.c: the injected failures, the noise of the
 * fabric and the hosts, the installed overlay tables and settings) is an
 * opaque object.  The decision code (skel_run.c, skel_locate.c and the
 * sans-I/O core) sees it only through the calls below, each of which
 * returns what an agent or the controller could observe in production:
 * probe replies, traceroute-like per-hop answers, RNIC and host counters,
 * the installed flow tables and configuration.  None of them says whether
 * a failure exists.  The injected-failure state is declared in the
 * world's private header, which only the world and the scorer
 * (skel_score.c) include; test_skeleton_model.c fails if a decision file
 * includes it or names its fault list.
 */
#ifndef AISIM_SKEL_OBS_H
#define AISIM_SKEL_OBS_H

#include <stdbool.h>
#include <stdint.h>

#include "systems/skeleton/skel_run.h"

typedef struct skel_wld skel_wld;

/* ---- the world's clock and the cluster's life (actions, no answers) ----- */

/* The world of run seed `seed`: its failures are the same for every
 * method of the run (common random numbers); its noise is drawn from
 * stream `noise_stream` (the method). */
skel_wld *skel_wld_create(const skel_world *w, uint64_t seed, uint64_t noise_stream);
void skel_wld_destroy(skel_wld *x);
/* Second t begins: failures end, start (scheduled, random on the
 * components of the endpoints with ep_up set). */
void skel_wld_step(skel_wld *x, int64_t t, const bool *ep_up);
/* A task's job starts training on its endpoints (global ids ep[0..n),
 * local order) / stops; its traffic loads the RNICs it uses. */
void skel_wld_job_start(skel_wld *x, int task, const skel_par *par, uint64_t seed, const int *ep,
                        int n);
void skel_wld_job_stop(skel_wld *x, int task);
/* The container of endpoint ep went away (its overlay went with it). */
void skel_wld_container_gone(skel_wld *x, int ep, int64_t t);
/* The operator isolates component c from at_s on (blacklist: traffic moves
 * off it); a link or switch is not isolated. */
void skel_wld_isolate(skel_wld *x, int32_t c, int64_t at_s);

/* ---- observations --------------------------------------------------------- */

/* One probe of `packets` packets from a to b along el (overlay: through
 * both ends' overlay chains, an agent must answer at b: target_up). */
typedef struct skel_probe_obs {
    bool answered;          /* a reply within the 1-s timeout */
    double rtt_us;
    uint32_t lost;          /* packets of the probe lost */
} skel_probe_obs;
skel_probe_obs skel_obs_probe(skel_wld *x, int a, int b, const int32_t *el, int nel, bool overlay,
                              bool target_up, int packets, double tsec);

/* A traceroute-like sweep along el (an underlay agent's, pinned path):
 * for each element i the answer of the node at its far end (hops[i]:
 * answered, the least RTT to it of three tries, packets lost of
 * `packets`).  Returns the elements
 * answered in a row from the start (nel: the whole path answered). */
typedef struct skel_hop_obs {
    bool answered;
    double rtt_us;
    uint32_t lost;
} skel_hop_obs;
int skel_obs_trace(skel_wld *x, int a, int b, const int32_t *el, int nel, int packets, double tsec,
                   skel_hop_obs *hops);

/* RNIC counters and port state as the host's agent reads them. */
typedef struct skel_rnic_obs {
    bool port_up, link_up;      /* PHY and logical port */
    uint32_t port_flaps;        /* link-down events in the last minute */
    bool fw_responds;           /* firmware answers a command in time */
    bool gid_matches;           /* the GID table matches the registered one */
    bool bond_ok;               /* both bond slaves active */
    uint32_t hw_errors;         /* fatal/async error events */
} skel_rnic_obs;
skel_rnic_obs skel_obs_rnic(skel_wld *x, int ep, double tsec);

/* A host board's counters and configuration. */
typedef struct skel_host_obs {
    uint32_t pcie_aer_errors;   /* PCIe AER correctable/uncorrectable on the NIC's path */
    uint32_t gdr_errors;        /* GPUDirect RDMA peer-memory failures */
    bool hugepages_ok;          /* configured hugepages as the job asks */
} skel_host_obs;
skel_host_obs skel_obs_host(skel_wld *x, int server, double tsec);

/* The installed overlay entry of endpoint ep at hop h (0 vPort, 1 vSwitch
 * rule, 2 RNIC offloaded rule, 3 VTEP): its next hop (h + 1; 4 = the
 * underlay; -1 forwards nothing), and for the rules what a dump shows. */
typedef struct skel_ovl_obs {
    int next;
    bool rdma;              /* vSwitch rule: the flow uses the RDMA path */
    int offloads;           /* vSwitch rule: times the flow is offloaded (1) */
    bool optimal;           /* vSwitch rule: offloaded to the flow's own RNIC */
    bool in_hw;             /* RNIC rule: present in the RNIC's table */
} skel_ovl_obs;
skel_ovl_obs skel_obs_overlay(skel_wld *x, int ep, int h, double tsec);

/* A switch egress queue's congestion-control setting (the queue of a link
 * at its switch end): ECN marking enabled as configured. */
bool skel_obs_queue_cc(skel_wld *x, int32_t link, double tsec);

#endif
