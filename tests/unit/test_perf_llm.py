"""Unit and property tests of the LLM inference model (perf.llm, perf.llm_setup, perf.profiles)."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infrafit.catalog import load_catalog
from infrafit.perf.llm import engine as llm
from infrafit.perf.llm.setup import ConfigRow, build_setup, plan_precision
from infrafit.perf.llm.shape import shape_from_arch
from infrafit.perf.profiles import load_profiles
from infrafit.workload.models import get_model

CAT = load_catalog()
H100 = CAT.accelerator("nvidia_h100_sxm")
B200 = CAT.accelerator("nvidia_b200_sxm")
L70 = shape_from_arch(get_model("llama3.1-70b"))
MIX = shape_from_arch(get_model("mixtral-8x7b"))


def setup(acc=H100, precision="fp8", tp=1, stack="tensorrt-llm", ep=1):
    s, plans, _ = build_setup([ConfigRow(acc, precision, stack, tp, 1, 1, ep)])
    return s, plans[0]


def test_shape_splits_dense_and_experts():
    assert L70.expert_params == 0 and not L70.is_moe
    # Mixtral: 8 experts x 32 layers x 3 x 4096 x 14336 routed; ~12.9B active per token incl. embeddings
    assert MIX.expert_params_total == pytest.approx(8 * 32 * 3 * 4096 * 14336)
    active = MIX.dense_matmul_params + 2 * 32 * MIX.expert_params
    assert 11e9 < active < 13.5e9


def test_precision_plan_falls_back_and_says_so():
    p = plan_precision(H100, "fp4")  # weight-only 4-bit on Hopper (Marlin W4A16), not fp8 W8A8
    assert p.gemm in ("bf16", "fp16") and p.weight == "fp4" and any("no fp4 tensor math" in n for n in p.notes)
    assert plan_precision(load_catalog().accelerator("nvidia_l4"), "fp8").gemm == "fp8"
    assert any("fell back" in n for n in plan_precision(load_catalog().accelerator("nvidia_a100_80gb_sxm"),
                                                         "fp8").notes)
    assert plan_precision(B200, "fp4").gemm == "fp4"
    w4 = plan_precision(H100, "int4")
    assert w4.weight == "int4" and w4.gemm in ("bf16", "fp16")


def test_decode_step_terms_sum_and_weight_bytes():
    s, _ = setup()
    parts = llm.decode_step(L70, s, np.array([1.0]), np.array([1000.0]))
    total = parts["gemm_s"] + parts["attention_s"] + parts["collectives_s"] + parts["overhead_s"]
    assert parts["time_s"] == pytest.approx(total)
    # at batch 1 decode is weight-bandwidth bound: bytes = matmul weights at fp8, the LM head at bf16
    assert L70.kept_matmul_params == pytest.approx(128_256 * 8_192)
    weight_bytes = (L70.dense_matmul_params - L70.kept_matmul_params) * 1.0 + L70.kept_matmul_params * 2.0
    expected = weight_bytes / (H100.memory_bytes_per_s * s.eff_memory[0])
    assert parts["gemm_memory_s"][0] == pytest.approx(expected)
    assert parts["gemm_memory_s"][0] > parts["gemm_compute_s"][0]


def test_tp_adds_allreduce_and_splits_weights():
    s1, _ = setup(tp=1)
    s4, _ = setup(tp=4)
    p1 = llm.decode_step(L70, s1, np.array([8.0]), np.array([1000.0]))
    p4 = llm.decode_step(L70, s4, np.array([8.0]), np.array([1000.0]))
    assert p1["collectives_s"][0] == 0 and p4["collectives_s"][0] > 0
    assert p4["gemm_memory_s"][0] == pytest.approx(p1["gemm_memory_s"][0] / 4)


def test_moe_reads_only_touched_experts_at_small_batch():
    s, _ = setup()
    b1 = llm.decode_step(MIX, s, np.array([1.0]), np.array([500.0]))["gemm_memory_s"][0]
    b_big = llm.decode_step(MIX, s, np.array([512.0]), np.array([500.0]))["gemm_memory_s"][0]
    assert b1 < 0.5 * b_big  # batch 1 reads 2 of 8 experts per layer


def test_kv_capacity_and_memory_fit():
    s, _ = setup(tp=1)
    c1 = llm.max_concurrency(L70, s, np.array([2000.0]))[0]
    s2, _ = setup(tp=2)
    c2 = llm.max_concurrency(L70, s2, np.array([2000.0]))[0]
    assert c1 >= 0 and c2 > 2 * c1  # TP frees memory from weights and splits the KV heads


def test_profile_lookup_prefers_specific_rows():
    prof = load_profiles()
    generic = prof.row("no-such-gen", "no-such-stack", "bf16", "decode", "memory")
    assert generic.generation == "*" and generic.stack == "*"
    specific = prof.row("hopper", "tensorrt-llm", "fp8", "decode", "memory")
    assert specific.generation in ("hopper", "*") and specific.rows_fitted >= 0


@settings(max_examples=25, deadline=None)
@given(bw=st.floats(1e12, 8e12), factor=st.floats(1.0, 4.0), batch=st.integers(1, 512))
def test_more_bandwidth_never_slows_decode(bw, factor, batch):
    s, _ = setup()
    a = replace(s, memory_bytes_per_s=np.array([bw]))
    b = replace(s, memory_bytes_per_s=np.array([bw * factor]))
    ta = llm.decode_step(L70, a, np.array([float(batch)]), np.array([1500.0]))["time_s"][0]
    tb = llm.decode_step(L70, b, np.array([float(batch)]), np.array([1500.0]))["time_s"][0]
    assert tb <= ta + 1e-15


@settings(max_examples=25, deadline=None)
@given(c=st.integers(1, 2000), extra=st.integers(1, 500), isl=st.integers(16, 8000), osl=st.integers(2, 2000))
def test_more_concurrency_never_lowers_tpot(c, extra, isl, osl):
    s, _ = setup(tp=2)
    a = llm.serve(L70, s, np.array([float(c)]), np.array([float(isl)]), np.array([float(osl)]))
    b = llm.serve(L70, s, np.array([float(c + extra)]), np.array([float(isl)]), np.array([float(osl)]))
    assert b.tpot_p50_s[0] >= a.tpot_p50_s[0] - 1e-12
    assert a.tpot_p99_s[0] >= a.tpot_p50_s[0] and a.ttft_p99_s[0] >= a.ttft_p50_s[0]


def test_gemm_row_efficiency_saturates_with_tokens():
    m_half = np.array(64.0)
    eff = llm.gemm_row_efficiency(np.array([1.0, 64.0, 4096.0]), m_half)
    assert eff[1] == pytest.approx(0.5)
    assert eff[0] < eff[1] < eff[2] < 1.0 and eff[2] > 0.98


def test_expert_tile_padding_slows_only_routed_compute_and_fades_with_rows():
    s, _ = setup(acc=H100, tp=8, ep=8)
    tokens = np.array([4096.0])
    padded = replace(s, expert_m_half=s.expert_m_half * 4.0)
    assert llm.gemm_compute_s(MIX, padded, tokens, s.eff_prefill_gemm)[0] > \
        llm.gemm_compute_s(MIX, s, tokens, s.eff_prefill_gemm)[0]
    # a dense model has no routed part: expert padding changes nothing
    assert llm.gemm_compute_s(L70, padded, tokens, s.eff_prefill_gemm)[0] == pytest.approx(
        llm.gemm_compute_s(L70, s, tokens, s.eff_prefill_gemm)[0])
    # time per token falls as the step carries more rows (M_e = step tokens x k / E grows)
    few = llm.gemm_compute_s(MIX, s, np.array([64.0]), s.eff_prefill_gemm)[0] / 64.0
    many = llm.gemm_compute_s(MIX, s, np.array([64.0]), s.eff_prefill_gemm, step_tokens=np.array([8192.0]))[0]
    assert many / 64.0 < few


def test_moe_prefill_pass_overhead_only_for_moe():
    s, _ = setup(acc=H100, tp=8, ep=8)
    assert np.all(llm.moe_prefill_overhead_s(L70, s) == 0.0)
    assert np.allclose(llm.moe_prefill_overhead_s(MIX, s), 32 * s.moe_layer_overhead_s)


def test_bunched_wave_waits_for_passes_and_poisson_arrivals_do_not():
    s, _ = setup(acc=H100, tp=8, ep=8)
    c, isl, osl = np.array([256.0]), np.array([1024.0]), np.array([1024.0])
    closed = llm.serve(MIX, s, c, isl, osl)
    poisson = llm.serve(MIX, s, c, isl, osl, closed_loop=False)
    assert closed.ttft_p50_s[0] > poisson.ttft_p50_s[0]
    # a smaller per-step token budget means more scheduler passes ahead, each paying the step
    small = llm.serve(MIX, replace(s, token_budget=s.token_budget / 8.0), c, isl, osl)
    assert small.ttft_p50_s[0] > closed.ttft_p50_s[0]
    # one client alone never waits behind a wave
    one = llm.serve(MIX, replace(s, token_budget=s.token_budget / 8.0), np.array([1.0]), isl, osl)
    assert one.ttft_p50_s[0] == pytest.approx(llm.serve(MIX, s, np.array([1.0]), isl, osl).ttft_p50_s[0])


def test_one_prompt_latency_runs_on_one_attention_group():
    s, _, _ = build_setup([ConfigRow(B200, "fp8", "tensorrt-llm", 1, 1, 8, 8)])
    isl = np.array([2048.0])
    # the dense part and attention of one prompt stay on its group; its routed experts spread
    assert llm.prefill_compute_s(MIX, s, isl, isl, one_group=True)[0] > llm.prefill_compute_s(MIX, s, isl, isl)[0]
    dense_alone = llm.prefill_compute_s(L70, s, isl, isl, one_group=True)[0]
    spread = 8.0 * llm.prefill_compute_s(L70, s, isl, isl)[0]
    # spread over 8 groups each GEMM has 8x fewer rows, so more tile padding per token
    pad = llm.gemm_row_efficiency(isl / 8.0, s.gemm_m_half)[0] / llm.gemm_row_efficiency(isl, s.gemm_m_half)[0]
    assert 0.95 * spread * pad <= dense_alone < spread


def test_kv_pool_is_a_fraction_of_memory_left_after_weights():
    s, _ = setup(acc=H100, tp=8)
    per_seq = L70.kv_elements(2048.0) * s.kv_bytes_per_element[0] / min(8, L70.kv_shards_max)
    free = (H100.memory_bytes - llm.weight_bytes_per_gpu(L70, s)[0]) * (1 - s.memory_reserve_fraction[0])
    assert llm.max_concurrency(L70, s, np.array([2048.0]))[0] == np.floor(free / per_seq)


def test_wide_moe_tp_runs_as_attention_data_parallel():
    from infrafit.perf.validate.llm import physical_layout

    gb200 = CAT.accelerator("nvidia_gb200_per_gpu")
    ds = shape_from_arch(get_model("deepseek-r1"))
    # 36 does not divide DeepSeek's 128 heads; MLA: attention fully data-parallel, experts over all 36
    assert physical_layout(36, 1, 1, 1, gb200, ds) == (1, 1, 36, 36)
    # a TP beyond one 8-GPU NVLink domain on B200 is re-read the same way
    assert physical_layout(64, 1, 1, 8, B200, ds) == (1, 1, 64, 64)
    # layouts that fit stay as stated; dense models are never re-read
    assert physical_layout(8, 1, 1, 8, B200, ds) == (8, 1, 1, 8)
    assert physical_layout(16, 1, 1, 1, B200, L70) == (16, 1, 1, 1)


def test_beams_share_the_prompt_kv_prefix():
    s, _ = setup(acc=H100, tp=1)
    beams = replace(L70, beam_width=4)
    ctx, prompt = np.array([2048.0]), np.array([1920.0])
    shared = llm.max_concurrency(beams, s, ctx, prompt)[0]
    unshared = llm.max_concurrency(beams, s, ctx)[0]
    single = llm.max_concurrency(L70, s, ctx, prompt)[0]
    # the prompt is stored once: 4 beams of 128 new tokens cost far less than 4 whole contexts
    assert unshared < shared < single
    free = (H100.memory_bytes - llm.weight_bytes_per_gpu(beams, s)[0]) * (1 - s.memory_reserve_fraction[0])
    per_req = (L70.kv_elements(1920.0) + 4 * L70.kv_elements(128.0)) * s.kv_bytes_per_element[0]
    assert shared == np.floor(free / per_req)


def test_calibrated_overlay_replaces_gemm_and_memory_efficiency_for_that_device_only(tmp_path, monkeypatch):
    """`infrafit calibrate` writes perf_profiles_bench.csv; the LLM model uses it for that accelerator."""
    from infrafit.catalog import load_catalog
    from infrafit.perf.llm.setup import ConfigRow, build_setup

    (tmp_path / "perf_profiles_bench.csv").write_text(
        "accelerator_id,precision,eff_compute_fraction,eff_memory_fraction,op_overhead_s,fitted_rows_count,"
        "source,retrieved_on\nnvidia_h100_sxm,fp8,0.2,0.3,0.0001,12,infrafit calibrate (test),2026-11-30\n")
    catalog = load_catalog(overlay_dir="")
    rows = [ConfigRow(catalog.accelerator("h100"), "fp8", "vllm", 1, 1, 1, 1),
            ConfigRow(catalog.accelerator("h200"), "fp8", "vllm", 1, 1, 1, 1)]
    plain, _, _ = build_setup(rows)
    monkeypatch.setenv("INFRAFIT_CATALOG", str(tmp_path))
    calibrated, _, _ = build_setup(rows)
    assert calibrated.eff_decode_gemm[0] == 0.2 and calibrated.eff_prefill_gemm[0] == 0.2
    assert calibrated.eff_memory[0] == 0.3
    assert calibrated.eff_memory[1] == plain.eff_memory[1]  # another device keeps the fitted profile
    assert plain.eff_memory[0] != 0.3


def test_no_arrival_process_beats_the_offline_engine_rate_over_a_grid():
    """Server <= Offline at the source: at every configuration, concurrency and length of the grid,
    the rate under Poisson or closed-loop arrivals stays at or below the engine's saturated rate, which
    charges no queueing (the batch is kept full) and equals C / (prefill + step + (OSL - 1) TPOT)."""
    c = np.array([1.0, 8.0, 64.0, 256.0, 1024.0, 4096.0])
    isl, osl = np.array([128.0, 1000.0, 4000.0]), np.array([2.0, 200.0, 2000.0])
    cc, ii, oo = (a.ravel() for a in np.meshgrid(c, isl, osl, indexing="ij"))
    for shape in (L70, MIX):
        for acc, prec, tp in ((H100, "fp8", 1), (H100, "fp8", 8), (B200, "fp4", 8), (B200, "bf16", 2)):
            s, _ = setup(acc=acc, precision=prec, tp=tp, ep=tp if shape.is_moe else 1)
            s = replace(s.take(np.zeros(cc.size, dtype=int)), prefill_burst=np.full(cc.size, 0.5))
            engine = llm.serve(shape, s, cc, ii, oo).offline_requests_per_s
            for closed in (False, True):
                sv = llm.serve(shape, s, cc, ii, oo, closed_loop=closed)
                np.testing.assert_array_equal(sv.offline_requests_per_s, engine)
                assert np.all(sv.requests_per_s <= engine)
            fits = cc <= llm.max_concurrency(shape, s, ii + oo, ii)
            k = np.where(fits)[0][-1]
            one = s.take(np.array([k]))
            step = llm.decode_step(shape, one, cc[k:k + 1], ii[k:k + 1] + oo[k:k + 1] / 2)["time_s"]
            sv = llm.serve(shape, one, cc[k:k + 1], ii[k:k + 1], oo[k:k + 1])
            tpot = sv.tpot_p50_s
            lifetime = llm.prefill_alone_s(shape, one, ii[k:k + 1]) + step + (oo[k] - 1) * tpot
            assert sv.offline_requests_per_s[0] == pytest.approx(cc[k] / lifetime[0])
            # bunched closed-loop clients at a large C wait for the wave: strictly below the engine
            big = fits & (cc >= 64) & (oo > 2)
            closed = llm.serve(shape, s, cc, ii, oo).requests_per_s
            assert big.any() and np.all(closed[big] < engine[big])


def test_mla_decode_step_charges_absorbed_attention_flops_and_prefill_does_not():
    ds = shape_from_arch(get_model("deepseek-v3"))
    arch = get_model("deepseek-v3")
    ctx = np.array([8192.0])
    absorbed = float(arch.flops_per_token_parts(8192, absorbed=True)["attention"])
    assert ds.decode_attn_flops(ctx)[0] == pytest.approx(absorbed)
    assert ds.attn_flops(ctx)[0] == pytest.approx(float(arch.flops_per_token_parts(8192)["attention"]))
    s, _ = setup(acc=B200, tp=8)
    parts = llm.decode_step(ds, s, np.array([64.0]), ctx)
    expected = 64.0 * ds.decode_attn_flops(ctx)[0] / 8 / (s.attn_flops_per_s[0] * s.eff_attention[0])
    assert parts["attention_compute_s"][0] == pytest.approx(expected)
    assert L70.decode_attn_flops(ctx)[0] == pytest.approx(L70.attn_flops(ctx)[0])
