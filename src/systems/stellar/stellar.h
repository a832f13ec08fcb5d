/*
 * stellar.h - the host side of Stellar, sans-I/O (Lu et al., "Stellar: a
 * new generation RDMA network for cloud AI", SIGCOMM 2025; papers.md
 * section 2).  No engine header: callers pass times and sizes in and get
 * costs, verdicts and counters back.  docs/stellar.md has the formulation
 * and every default with its source.
 *
 *  - Container start-up (section 5, Fig. 6): hypervisor time
 *    base + per_gib * mem, plus, with full pinning (VFIO, HyV/MasQ),
 *    mem * pin_per_gib before the container runs.  PVDMA pins nothing at
 *    start; the Map Cache records the 2 MiB blocks pinned on first DMA touch
 *    (one block pin each), and a later touch is a lookup; a bounded cache
 *    evicts (unpins) its least recently used block to pin another.
 *  - The Fig. 5 hazard: a 2 MiB PVDMA block that covers the 4 KiB virtual
 *    doorbell keeps a stale translation to the RNIC doorbell after the RDMA
 *    program exits; a later GPU DMA to that guest page lands in the doorbell.
 *    With the doorbell in the virtio shared-memory I/O region (disjoint from
 *    guest RAM) no RAM block covers it.
 *  - GDR address translation (section 6, Figs. 8 and 14): an RNIC whose
 *    DMA engine keeps a bounded number of page-sized requests outstanding;
 *    with ATS each page needs a translation from the ATC (LRU), a miss costs
 *    a PCIe round trip to the IOMMU plus, on an IOMMU cache miss, a page
 *    walk; eMTT holds the final translation in the MTT, an LRU cache of
 *    mtt_entries pages on the RNIC whose miss fetches the entry from host
 *    memory (mtt_miss), and sends GPU-memory TLPs peer to peer; HyV/MasQ
 *    sends GDR
 *    through the root complex, whose peer-to-peer rate caps it.
 *  - Virtual devices (sections 3.1 and 4): SR-IOV VFs (count fixed up to a
 *    maximum, a reset to change it, per-VF queue memory, one PCIe-switch LUT
 *    entry per GDR-capable VF on every switch) against vStellar's virtio
 *    devices: a capacity planner for a server shape and a container mix.
 */
#ifndef AISIM_STELLAR_H
#define AISIM_STELLAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STELLAR_GIB ((int64_t)1 << 30)

/* ---- container start-up ------------------------------------------------------ */

typedef struct stellar_pin_params {
    int64_t hv_base_ps;         /* hypervisor start-up at zero memory */
    int64_t hv_per_gib_ps;      /* hypervisor time per GiB of container memory */
    int64_t pin_per_gib_ps;     /* full pinning time per GiB (1 / R_pin) */
    int64_t block_pin_ps;       /* PVDMA: pinning one block on first touch */
    int64_t repin_ps;           /* PVDMA: pinning again a block evicted before */
    int64_t unpin_ps;           /* PVDMA: unpinning one block (an eviction) */
    int64_t lookup_ps;          /* PVDMA: a Map Cache hit */
    int64_t block_bytes;        /* PVDMA block, a power of two (2 MiB) */
} stellar_pin_params;

/* Hypervisor part of the start-up of a container of mem_bytes. */
int64_t stellar_hv_ps(const stellar_pin_params *p, int64_t mem_bytes);
/* Time to pin mem_bytes in full. */
int64_t stellar_full_pin_ps(const stellar_pin_params *p, int64_t mem_bytes);
/* Start-up time: hypervisor plus, when `full`, pinning everything. */
int64_t stellar_startup_ps(const stellar_pin_params *p, int64_t mem_bytes, bool full);

/* The simulated Map Cache: one byte per block of guest RAM (0 never pinned,
 * 1 pinned, 2 pinned once and evicted) and, when its capacity is bounded, a
 * recency list of the pinned blocks: pinning a block into a full cache
 * first evicts (unpins) the least recently used one; a touch of a pinned
 * block moves it to the head. */
typedef struct stellar_mapcache {
    int64_t block_bytes;        /* block size, a power of two */
    size_t nblocks;             /* guest RAM / block_bytes, rounded up */
    uint8_t *pinned;            /* per block: 0, 1 pinned, 2 evicted; owned */
    size_t pinned_blocks;       /* blocks pinned now */
    size_t capacity;            /* blocks pinned at most (nblocks: unbounded) */
    uint32_t *prev, *next;      /* recency list when bounded, else NULL; owned */
    uint32_t head, tail;        /* most / least recently used; UINT32_MAX: none */
    uint64_t hits;              /* block touches that found the block pinned */
    uint64_t misses;            /* block touches that pinned it (first pins and re-pins) */
    uint64_t repins;            /* ... of which the block had been evicted */
    uint64_t evictions;         /* blocks unpinned to make room */
    uint64_t unpins;            /* blocks released (stellar_mc_release) */
} stellar_mapcache;

void stellar_mc_init(stellar_mapcache *mc, int64_t mem_bytes, int64_t block_bytes);
void stellar_mc_fini(stellar_mapcache *mc);
/* Bounds the cache to `blocks` pinned blocks (0 or >= nblocks: unbounded)
 * with LRU eviction; call before the first touch. */
void stellar_mc_set_capacity(stellar_mapcache *mc, size_t blocks);
/* Marks every block of guest RAM pinned (full pinning, unbounded cache);
 * counts no misses. */
void stellar_mc_pin_all(stellar_mapcache *mc);
/* A DMA over [gpa, gpa + len) (inside guest RAM, spanning at most capacity
 * blocks): pins the blocks not pinned now, evicting as needed.  Returns the
 * blocks newly pinned; *hits gets the blocks found. */
size_t stellar_mc_touch(stellar_mapcache *mc, int64_t gpa, int64_t len, size_t *hits);
/* Releases (unpins) the pinned blocks that lie entirely inside the range;
 * returns how many. */
size_t stellar_mc_release(stellar_mapcache *mc, int64_t gpa, int64_t len);

/* ---- the Fig. 5 doorbell hazard -------------------------------------------- */

enum stellar_db_layout {
    STELLAR_DB_IN_RAM,          /* the vDB page is a guest-RAM page (the bug) */
    STELLAR_DB_SHM,             /* the vDB page is in the shm I/O region (the fix) */
};

typedef struct stellar_hazard {
    bool hazard;                /* a GPU DMA was translated to the RNIC doorbell */
    int64_t db_gpa;             /* guest address of the virtual doorbell */
    int64_t queue_gpa;          /* the second GPU command queue */
    int64_t block_gpa;          /* start of the PVDMA block of the first queue */
    char what[200];             /* one sentence: what happened */
} stellar_hazard;

/* Replays Fig. 5 in one layout: an RDMA program maps its vDB page next to a
 * GPU command queue; the GPU's DMA to the queue makes PVDMA pin (and map)
 * the queue's whole block; the RDMA program exits (the vDB page returns to
 * the guest as RAM, the block stays in the Map Cache); a new GPU command
 * queue is allocated at the old vDB address and the GPU DMAs to it.  The
 * IOMMU translates through the Map Cache snapshot; a translation to the
 * doorbell where the guest now has RAM is the hazard. */
void stellar_fig5(enum stellar_db_layout layout, int64_t block_bytes, int64_t page_bytes,
                  stellar_hazard *out);

/* ---- GDR address translation ------------------------------------------------ */

/* An LRU set of 64-bit keys (page numbers) of fixed capacity; O(1) per
 * access (open-addressing hash + intrusive list in arrays). */
typedef struct stellar_lru {
    size_t cap;                 /* entries */
    size_t n;                   /* entries in use */
    uint64_t *key;              /* per slot */
    uint32_t *prev, *next;      /* per slot: recency list, head = most recent */
    uint32_t head, tail;        /* slots; UINT32_MAX when empty */
    uint32_t *table;            /* hash buckets -> slot + 1 (0: empty) */
    size_t tmask;               /* table size - 1 */
    uint64_t hits, misses;
} stellar_lru;

void stellar_lru_init(stellar_lru *l, size_t cap);
void stellar_lru_fini(stellar_lru *l);
/* Looks key up; on a miss inserts it, evicting the least recently used.
 * Returns true on a hit. */
bool stellar_lru_access(stellar_lru *l, uint64_t key);

enum stellar_gdr_path {
    STELLAR_GDR_ATS,            /* PCIe ATS + the RNIC's ATC (CX6-style) */
    STELLAR_GDR_EMTT,           /* vStellar: final translation in the MTT */
    STELLAR_GDR_RC,             /* HyV/MasQ: untranslated, through the root complex */
    STELLAR_GDR_NPATHS
};
extern const char *const stellar_gdr_path_names[];

typedef struct stellar_gdr_params {
    int64_t line_bps;           /* goodput ceiling of the RNIC port(s) */
    int64_t page_bytes;         /* translation granule = DMA request size (4 KiB) */
    int outstanding;            /* DMA requests in flight at most */
    int64_t dma_ps;             /* request latency with a translation at hand */
    int64_t ats_rtt_ps;         /* ATC miss: PCIe round trip to the IOMMU */
    int64_t walk_ps;            /* IOMMU cache miss: page-table walk */
    size_t atc_entries;         /* ATC capacity, pages */
    size_t iommu_entries;       /* IOMMU translation-cache coverage, pages */
    int64_t rc_bps;             /* root-complex peer-to-peer ceiling (HyV/MasQ) */
    size_t mtt_entries;         /* eMTT: translations the RNIC caches, pages */
    int64_t mtt_miss_ps;        /* eMTT: a miss fetches the entry from host memory */
    int connections;            /* QPs written round robin, each its own buffer */
    bool host_memory;           /* buffers in host RAM instead of GPU memory */
    struct sim *poll;           /* polled (sim_poll) as requests go; NULL: never */
} stellar_gdr_params;

typedef struct stellar_gdr_result {
    double gbps;                /* measured after the warm-up pass */
    double atc_hit;             /* ATC hit ratio (ATS path), else NAN */
    double iommu_hit;           /* IOMMU cache hit ratio where the IOMMU is used, else NAN */
    double mtt_hit;             /* MTT cache hit ratio (eMTT path), else NAN */
    double latency_us;          /* mean request latency */
    uint64_t requests;          /* requests measured */
} stellar_gdr_result;

/* Goodput of a port of port_bps carrying payloads of mtu bytes with
 * overhead_bytes of headers and framing per packet on the wire. */
int64_t stellar_goodput_bps(int64_t port_bps, int64_t mtu, int64_t overhead_bytes);

/* Streams `connections` buffers of msg_bytes each, round robin, one message
 * at a time, page by page, through the chosen translation path: one warm-up
 * pass over every buffer (at least min_requests requests), then at least one
 * more pass (and min_requests) measured.  Request i may issue when request
 * i - outstanding has completed; it completes after its latency and after
 * the previous one plus its serialisation at the line (or root-complex)
 * rate, so throughput = min(rate, outstanding x page / latency). */
void stellar_gdr_run(const stellar_gdr_params *p, enum stellar_gdr_path path,
                     int64_t msg_bytes, uint64_t min_requests, stellar_gdr_result *out);
/* What that run would do, in doubles (nothing overflows): the requests it
 * issues and an upper bound of its last completion time, ps (every request
 * paying its serialisation and the longest latency).  The model refuses a
 * configuration whose bound does not fit an int64_t time. */
double stellar_gdr_requests(const stellar_gdr_params *p, int64_t msg_bytes,
                            uint64_t min_requests);
double stellar_gdr_horizon_ps(const stellar_gdr_params *p, enum stellar_gdr_path path,
                              int64_t msg_bytes, uint64_t min_requests);

/* ---- virtual devices: SR-IOV against vStellar ----------------------------- */

typedef struct stellar_server {
    int rnics;                  /* RNICs per server */
    int switches;               /* PCIe switches per server */
    int lut_entries;            /* BDFs per switch LUT usable by GDR VFs */
    int vf_max;                 /* VFs per RNIC at most */
    int vf_current;             /* VFs per RNIC configured now (a change resets) */
    int64_t vf_mem_bytes;       /* memory each VF claims (its queues) */
    int64_t vf_create_ps;       /* attaching one existing VF to a container */
    /* time to set an RNIC's VF count to n (sriov_numvfs), measured: n_i VFs
     * ready after t_i, piecewise linear between points, the last segment
     * extended; RNICs are set one after another */
    const int64_t *vf_enable_n;     /* increasing VF counts; borrowed */
    const int64_t *vf_enable_ps;    /* times, same length; borrowed */
    size_t vf_enable_points;
    int vdev_max;               /* vStellar virtual devices per server */
    int64_t vdev_mem_bytes;     /* memory each virtual device claims at creation */
    int64_t vdev_create_ps;     /* creating one virtual device */
    int parallel;               /* devices created at once */
} stellar_server;

typedef struct stellar_class {
    const char *name;           /* borrowed */
    int count;                  /* containers */
    int devices;                /* RDMA devices per container */
    bool gdr;                   /* wants GPUDirect RDMA */
} stellar_class;

typedef struct stellar_plan {
    int containers;             /* asked for */
    int placed;                 /* given their devices */
    int gdr_wanted;             /* placed containers that want GDR */
    int gdr_ok;                 /* ... and got it on every device */
    int devices;                /* devices created */
    int per_rnic;               /* devices (VFs) on the busiest RNIC */
    bool reset;                 /* the RNICs had to be reset */
    int64_t mem_bytes;          /* memory the devices claim */
    int64_t device_ps;          /* one container's wait for its first device */
    int64_t create_ps;          /* time until every device exists */
} stellar_plan;

/* Time to set one RNIC's VF count to n, from the measured points. */
int64_t stellar_vf_enable_ps(const stellar_server *s, int n);

/* Places the classes in order, each container whole or not at all. */
void stellar_plan_sriov(const stellar_server *s, const stellar_class *c, size_t nc,
                        stellar_plan *out);
void stellar_plan_vstellar(const stellar_server *s, const stellar_class *c, size_t nc,
                           stellar_plan *out);

#endif
