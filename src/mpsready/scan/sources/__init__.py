"""Declaration sources: one module per kind of file, each a :class:`~.interface.DependencySource`."""

from mpsready.scan.sources.conda import CondaSource
from mpsready.scan.sources.dockerfile import DockerfileSource
from mpsready.scan.sources.interface import Dependency, DependencySource, ProjectFiles, RawFinding, SourceResult
from mpsready.scan.sources.lockfiles import LockfileSource
from mpsready.scan.sources.notebook import NotebookSource
from mpsready.scan.sources.pipfile import PipfileSource
from mpsready.scan.sources.pyproject import PyprojectSource
from mpsready.scan.sources.requirements import RequirementsSource
from mpsready.scan.sources.setup_cfg import SetupCfgSource
from mpsready.scan.sources.setup_py import SetupPySource
from mpsready.scan.sources.shell import ShellScriptSource

ALL_SOURCES: tuple[DependencySource, ...] = (
    RequirementsSource(), PyprojectSource(), SetupPySource(), SetupCfgSource(), CondaSource(), PipfileSource(),
    LockfileSource(), DockerfileSource(), ShellScriptSource(), NotebookSource(),
)

__all__ = ["ALL_SOURCES", "Dependency", "DependencySource", "ProjectFiles", "RawFinding", "SourceResult"]
