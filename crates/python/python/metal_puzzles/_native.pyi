"""Type stubs of the Rust extension (conversion only; see the Python modules for the API)."""

from typing import List, Optional, Sequence, Tuple, Union

ArrayTuple = Tuple[str, List[int], List[int], int, bytes]
ArrayOut = Tuple[str, List[int], bytearray]
Input = Union[bool, int, float, ArrayTuple]
TemplateValue = Union[bool, int, str]

class MlxKernel:
    def __init__(
        self,
        name: str,
        input_names: Sequence[str],
        output_names: Sequence[str],
        source: str,
        header: str,
        ensure_row_contiguous: bool,
        atomic_outputs: bool,
        defines: Sequence[Tuple[str, str]] = ...,
    ) -> None: ...
    def generate(
        self,
        inputs: Sequence[Tuple[str, Sequence[int]]],
        output_dtypes: Sequence[str],
        template: Sequence[Tuple[str, TemplateValue]],
    ) -> str: ...
    def call(
        self,
        inputs: Sequence[Input],
        output_shapes: Sequence[Sequence[int]],
        output_dtypes: Sequence[str],
        grid: Sequence[int],
        threadgroup: Sequence[int],
        template: Sequence[Tuple[str, TemplateValue]],
        init_value: Optional[float],
        verbose: bool,
        check: str,
        count: bool,
        capture: Optional[str] = None,
    ) -> Tuple[List[ArrayOut], str, Optional[str], str, Optional[List[int]], Optional[str]]: ...

class ShaderLibrary:
    def __init__(self, source: str, file_name: str) -> None: ...
    def kernel_names(self) -> List[str]: ...
    def warnings(self) -> str: ...
    def call(
        self,
        name: str,
        args: Sequence[Union[Input, List[int], List[float]]],
        threads: Optional[Sequence[int]],
        group_size: Optional[Sequence[int]],
        check: str,
        capture: Optional[str] = None,
    ) -> Tuple[List[Optional[ArrayOut]], str, List[str], Optional[str]]: ...

def verbose_env() -> bool: ...
def cli_main(argv: Sequence[str], program: str) -> int: ...
def book_spec(number: int, inputs: Sequence[ArrayTuple]) -> ArrayOut: ...
def book_puzzles() -> str: ...
def book_inputs(number: int, case: int, random: Optional[int] = None) -> List[ArrayOut]: ...
def book_check(
    number: int, header: str, body: str, capture: Optional[str] = None
) -> Tuple[bool, bool, str, str, List[int], Optional[str]]: ...
def score_table(title: str, score: Sequence[int], targets: Sequence[Optional[int]], judged: bool) -> str: ...
def book_repr(a: ArrayTuple) -> str: ...
def draw_call(
    kernel: MlxKernel,
    title: str,
    inputs: Sequence[Input],
    output_shape: Sequence[int],
    output_dtype: str,
    grid: Sequence[int],
    threadgroup: Sequence[int],
    width: int,
    color: bool,
) -> Tuple[str, str]: ...
