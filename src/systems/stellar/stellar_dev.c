/*
 * stellar_dev.c - virtual devices, sans-I/O: SR-IOV VFs against vStellar's
 * virtio devices for one server (contract in stellar.h).
 *
 * SR-IOV (papers.md 2(a) problems 1 and 3): a container's devices go to
 * the RNICs with the fewest VFs; an RNIC holds at most vf_max VFs, and the
 * VF count, one setting for every RNIC, changes only with a reset; each
 * provisioned VF claims vf_mem_bytes.  GDR needs the VF's BDF in the PCIe
 * switch LUT; we take it that a GDR-capable VF needs an entry in every
 * switch's LUT (so that every GPU of the server is reachable peer to peer),
 * which makes lut_entries GDR VFs per server, lut_entries / rnics per RNIC:
 * the paper's 8 per RNIC and 32 per server for 32-entry LUTs and 4 RNICs.
 * A container that wants GDR and finds no LUT room still runs, without GDR.
 * vStellar (section 4): no BDF per device, so every device can do GDR; up to
 * vdev_max devices, vdev_create_ps each.
 * Times: changing the VF count resets the RNICs, each set to the new count
 * in turn (sriov_numvfs), which takes the measured enable time of that many
 * VFs (stellar_vf_enable_ps); a VF then needs vf_create_ps to attach.
 */
#include <string.h>

#include "systems/stellar/stellar.h"

int64_t stellar_vf_enable_ps(const stellar_server *s, int n)
{
    size_t k = s->vf_enable_points;
    if (n <= 0 || k == 0)
        return 0;
    /* the segment holding n: from (0, 0) to the first point, between two
     * points, or the last two extended */
    double x0 = 0, y0 = 0, x1 = (double)s->vf_enable_n[0], y1 = (double)s->vf_enable_ps[0];
    for (size_t i = 1; i < k && (double)n > x1; i++) {
        x0 = x1;
        y0 = y1;
        x1 = (double)s->vf_enable_n[i];
        y1 = (double)s->vf_enable_ps[i];
    }
    return (int64_t)(y0 + (y1 - y0) * ((double)n - x0) / (x1 - x0) + 0.5);
}

static int64_t batches(int n, int parallel)
{
    return parallel > 0 ? (n + parallel - 1) / parallel : n;
}

void stellar_plan_sriov(const stellar_server *s, const stellar_class *c, size_t nc,
                        stellar_plan *out)
{
    enum { MAXR = 64 };
    int used[MAXR] = {0}, gdr_used[MAXR] = {0};
    int nr = s->rnics < MAXR ? s->rnics : MAXR;
    int gdr_per_rnic = s->lut_entries / (nr > 0 ? nr : 1);
    memset(out, 0, sizeof *out);
    for (size_t k = 0; k < nc; k++)
        for (int i = 0; i < c[k].count; i++) {
            out->containers++;
            /* the d least-loaded RNICs, lowest index first on ties */
            int pick[MAXR], d = c[k].devices < nr ? c[k].devices : nr;
            bool fits = c[k].devices <= nr, gdr = c[k].gdr;
            for (int j = 0; j < d; j++) {
                int best = -1;
                for (int r = 0; r < nr; r++) {
                    bool taken = false;
                    for (int q = 0; q < j; q++)
                        taken |= pick[q] == r;
                    if (!taken && (best < 0 || used[r] < used[best]))
                        best = r;
                }
                pick[j] = best;
                fits &= used[best] < s->vf_max;
                gdr &= gdr_used[best] < gdr_per_rnic;
            }
            if (!fits)
                continue;
            out->placed++;
            out->devices += d;
            out->gdr_wanted += c[k].gdr;
            out->gdr_ok += gdr;
            for (int j = 0; j < d; j++) {
                used[pick[j]]++;
                gdr_used[pick[j]] += gdr;
            }
        }
    for (int r = 0; r < nr; r++)
        if (used[r] > out->per_rnic)
            out->per_rnic = used[r];
    out->reset = out->per_rnic != s->vf_current;
    out->mem_bytes = (int64_t)out->per_rnic * nr * s->vf_mem_bytes;
    int64_t reset = out->reset ? nr * stellar_vf_enable_ps(s, out->per_rnic) : 0;
    out->device_ps = reset + s->vf_create_ps;
    out->create_ps = reset + batches(out->devices, s->parallel) * s->vf_create_ps;
}

void stellar_plan_vstellar(const stellar_server *s, const stellar_class *c, size_t nc,
                           stellar_plan *out)
{
    memset(out, 0, sizeof *out);
    for (size_t k = 0; k < nc; k++)
        for (int i = 0; i < c[k].count; i++) {
            out->containers++;
            if (out->devices + c[k].devices > s->vdev_max)
                continue;
            out->placed++;
            out->devices += c[k].devices;
            out->gdr_wanted += c[k].gdr;
            out->gdr_ok += c[k].gdr;
        }
    int nr = s->rnics > 0 ? s->rnics : 1;
    out->per_rnic = (out->devices + nr - 1) / nr;
    out->mem_bytes = (int64_t)out->devices * s->vdev_mem_bytes;
    out->device_ps = s->vdev_create_ps;
    out->create_ps = batches(out->devices, s->parallel) * s->vdev_create_ps;
}
