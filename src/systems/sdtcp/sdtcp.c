/*
 * sdtcp.c - the SDTCP policy (sdtcp.h): classification, window bands,
 * selection of the flows to slow on a congested port, restoration.
 *
 * State: the rules it has installed, as (switch, port, flow, burst?) in one
 * array, so that a congestion-cleared message on a port deletes exactly
 * that port's rules.  A burst flow capped in the severe band keeps its cap
 * until the port clears (lifting it when the queue falls back to a milder
 * band lets the burst's window jump back at once and refill the buffer: the
 * oscillation we measured first).
 */
#include "aisim/sdtcp.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "aisim/err.h"

typedef struct cap_rec {
    int sw;
    uint32_t port, flow;
    int burst;
} cap_rec;

struct sdtcp {
    sdtcp_params p;
    cap_rec *caps;
    size_t ncaps, capcaps;
    sdtcp_mod *out;             /* the decisions of the last call */
    size_t nout, capout;
    sdtcp_counts k;
};

void sdtcp_params_default(sdtcp_params *p, uint32_t mss)
{
    *p = (sdtcp_params){
        .mode = SDTCP_MINIMAL,
        .rtt_ps = 300 * 1000000LL,              /* 300 us */
        .q_low_bytes = 50 * 1500,
        .q_high_bytes = 80 * 1500,
        .f_mild = 2.0 / 3.0,
        .f_moderate = 0.5,
        .min_wnd = mss,
        .fixed_wnd = 2 * mss,
        .bg_bytes = 1000000,
        .bg_age_ps = 1000000000000LL,           /* 1 s */
        .idle_ps = 10000000000LL,               /* 10 ms */
        .hard_ps = 0,
    };
}

sdtcp *sdtcp_create(const sdtcp_params *p)
{
    sdtcp *s = xcalloc(1, sizeof *s);
    s->p = *p;
    return s;
}

void sdtcp_destroy(sdtcp *s)
{
    if (!s)
        return;
    free(s->caps);
    free(s->out);
    free(s);
}

int sdtcp_is_background(const sdtcp_params *p, const sdtcp_flow *f)
{
    return f->bytes > p->bg_bytes || f->age_ps > p->bg_age_ps;
}

void sdtcp_get_counts(const sdtcp *s, sdtcp_counts *k) { *k = s->k; }

/* The record of (sw, port, flow), or NULL. */
static cap_rec *cap_find(sdtcp *s, int sw, uint32_t port, uint32_t flow)
{
    for (size_t i = 0; i < s->ncaps; i++)
        if (s->caps[i].sw == sw && s->caps[i].port == port && s->caps[i].flow == flow)
            return &s->caps[i];
    return NULL;
}

static void cap_add(sdtcp *s, int sw, uint32_t port, uint32_t flow, int burst)
{
    cap_rec *r = cap_find(s, sw, port, flow);
    if (r) {
        r->burst = burst;
        return;
    }
    if (s->ncaps == s->capcaps) {
        s->capcaps = s->capcaps ? 2 * s->capcaps : 16;
        s->caps = xrealloc(s->caps, s->capcaps * sizeof *s->caps);
    }
    s->caps[s->ncaps++] = (cap_rec){sw, port, flow, burst};
}

static void emit(sdtcp *s, sdtcp_mod m)
{
    if (s->nout == s->capout) {
        s->capout = s->capout ? 2 * s->capout : 16;
        s->out = xrealloc(s->out, s->capout * sizeof *s->out);
    }
    s->out[s->nout++] = m;
}

/* Deletes every rule it put on (sw, port). */
static void lift(sdtcp *s, int sw, uint32_t port)
{
    size_t j = 0;
    for (size_t i = 0; i < s->ncaps; i++) {
        cap_rec r = s->caps[i];
        if (r.sw == sw && r.port == port) {
            emit(s, (sdtcp_mod){.sw = sw, .flow = r.flow, .del = 1});
            s->k.deleted++;
            continue;
        }
        s->caps[j++] = r;
    }
    s->ncaps = j;
}

static uint32_t floor_wnd(const sdtcp_params *p, double w)
{
    if (!(w >= p->min_wnd))
        return p->min_wnd;
    return w > 4294967295.0 ? UINT32_MAX : (uint32_t)w;
}

size_t sdtcp_decide(sdtcp *s, const sdtcp_obs *o, const sdtcp_mod **out)
{
    const sdtcp_params *p = &s->p;
    s->nout = 0;
    *out = s->out;
    if (o->cleared)
        lift(s, o->sw, o->port);
    if (o->cleared || o->nflows == 0) {
        *out = s->out;
        return s->nout;
    }
    size_t b = 0;
    for (size_t i = 0; i < o->nflows; i++)
        b += p->mode == SDTCP_ALL || sdtcp_is_background(p, &o->flows[i]);
    size_t a = o->nflows - b;
    double bdp = (double)o->rate_bps * ((double)p->rtt_ps * 1e-12) / 8.0;
    double swnd = (bdp + (double)o->queue_bytes) / (double)o->nflows;
    int band = o->queue_bytes < p->q_low_bytes ? 0 : o->queue_bytes < p->q_high_bytes ? 1 : 2;
    s->k.band[band]++;
    double wbg = band == 0 ? p->f_mild * swnd : band == 1 ? p->f_moderate * swnd : p->min_wnd;
    if (p->mode == SDTCP_FIXED)
        wbg = p->fixed_wnd;
    bool cap_bursts = p->mode == SDTCP_BANDED && band == 2 && a > 0;
    double wburst = cap_bursts ? ((double)o->nflows * swnd - (double)b * p->min_wnd) / (double)a
                               : 0;
    for (size_t i = 0; i < o->nflows; i++) {
        const sdtcp_flow *f = &o->flows[i];
        bool bg = p->mode == SDTCP_ALL || sdtcp_is_background(p, f);
        if (!bg && !cap_bursts)
            continue;
        uint32_t w = floor_wnd(p, bg ? wbg : wburst);
        emit(s, (sdtcp_mod){.sw = o->sw, .flow = f->flow, .wnd = w, .idle_ps = p->idle_ps,
                            .hard_ps = p->hard_ps});
        cap_add(s, o->sw, o->port, f->flow, !bg);
        if (bg)
            s->k.capped_bg++;
        else
            s->k.capped_burst++;
    }
    *out = s->out;
    return s->nout;
}
