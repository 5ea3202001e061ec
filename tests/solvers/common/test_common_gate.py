"""The compile gate's records (gpusp.solvers.common.gate): a signature written at its kernel or kernel factory, the
targets made from each case, and the labels the gate lists."""

import functools
import types

from gpusp.solvers.common import gate


def test_a_kernel_record_fills_its_template_per_case():
    kernel = types.SimpleNamespace(py_func=lambda a, b: None)
    kernel.py_func.__name__ = "relax"
    record = gate.Record("relax", kernel, "void({w}[::1], int64)", gate.DISTANCES)
    assert list(record.targets()) == [("relax[int32]", kernel, "void(int32[::1], int64)"),
                                      ("relax[int64]", kernel, "void(int64[::1], int64)")]


def test_a_factory_record_passes_its_parameters_and_compiles_the_kernels_a_case_names():
    made = []

    @functools.cache
    def kernels(tile: int, paths: bool = True):
        made.append((tile, paths))
        return {"p1": f"k1-{tile}", "p2": f"k2-{tile}"}

    record = gate.Record("kernels", kernels, {"p1": "void({w}[:, ::1], int64)", "p2": "void({w}[:, ::1])"},
                         lambda: [dict(tile=4, w="int32"), dict(tile=8, paths=False, w="int64", kernels=("p2",))])
    assert list(record.targets()) == [
        ("kernels.p1[tile=4,int32]", "k1-4", "void(int32[:, ::1], int64)"),
        ("kernels.p2[tile=4,int32]", "k2-4", "void(int32[:, ::1])"),
        ("kernels.p2[tile=8,paths=False,int64]", "k2-8", "void(int64[:, ::1])")]
    assert made == [(4, True), (8, False)]  # the template's names are not the factory's arguments


def test_the_decorator_records_where_it_is_written_and_returns_the_kernel():
    def factory(tile):
        return {"k": tile}

    decorated = gate.kernel({"k": "void(int{tile}[::1])"}, cases=[dict(tile=32)])(factory)
    assert decorated is factory
    (record,) = [r for r in gate.recorded(__name__) if r.obj is factory]
    assert list(record.targets()) == [("factory.k[tile=32]", 32, "void(int32[::1])")]
