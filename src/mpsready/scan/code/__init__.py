"""Python code analysis from syntax trees (``ast``): CUDA-only APIs, dtypes, kernels, imports."""

from mpsready.scan.code.analyzer import ANALYZER_VERSION, CodeResult, analyze_source

__all__ = ["ANALYZER_VERSION", "CodeResult", "analyze_source"]
