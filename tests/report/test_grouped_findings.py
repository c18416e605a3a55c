"""Issue 38: findings grouped by what they do to the verdict, then rule, then file, in HTML and Markdown."""

from __future__ import annotations

from mpsready.report.build import build_report
from mpsready.report.evidence import Evidence, env, scan
from mpsready.report.formats import markdown
from mpsready.report.formats.groups import group_findings
from tests.report import fixtures as fx


def many_findings_report():
    return build_report(Evidence(scan=scan.from_doc(fx.scan_doc(fx.many_findings())), env=env.from_doc(fx.env_doc())))


def test_groups_by_verdict_impact_then_rule_then_file():
    groups = group_findings(many_findings_report())
    assert [(g.impact, g.count) for g in groups] == [("headline", 2), ("optional", 42), ("secondary", 60)]
    assert [(r.code, r.count, len(r.files)) for r in groups[0].rules] == [("DEP101", 2, 1)]
    assert [(r.code, r.severity, r.count, len(r.files)) for r in groups[1].rules] == [
        ("API103", "degrades", 22, 5), ("DTY201", "info", 20, 3)]
    api = groups[2].rules[0]
    assert (api.code, api.count, len(api.files), len(api.shown_files), api.folded_count) == ("API101", 60, 14, 3, 45)  # 4 files of 5, 10 of 4
    first = api.files[0]
    assert (len(first.findings), len(first.shown), [f.location.line for f in first.folded]) == (5, 5, [])


def test_markdown_folds_rules_with_counts():
    md = markdown.render(many_findings_report())
    assert "### Limits the verdict (2)" in md and "### Secondary (does not change the verdict) (60)" in md
    assert "### In optional parts (tests, examples, docs, launchers, vendored code, off the main path) (42)" in md
    assert "<details open><summary><code>DEP101</code> blocker" in md
    assert "· 60 in 14 files (predicted)</summary>" in md
    assert "- 11 more files (45 findings): " in md
    assert md.count("<details") == md.count("</details>") == 4


def test_project_name_from_the_project_not_the_working_folder(tmp_path, monkeypatch):
    from mpsready.report.formats.common import project_name

    repo = tmp_path / "minRF"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert project_name(str(repo / "src")) == "minRF"  # the repository's folder
    (repo / "setup.cfg").write_text("[metadata]\nname = minrf-setupcfg\n")
    assert project_name(str(repo)) == "minrf-setupcfg"
    (repo / "pyproject.toml").write_text('[project]\nname = "minrf"\nversion = "0.1"\n')
    assert project_name(str(repo)) == "minrf"  # package metadata first
    (repo / "pyproject.toml").write_text("[project\nbroken")
    assert project_name(str(repo)) == "minrf-setupcfg"  # a malformed file is skipped, not fatal
    work = tmp_path / "report_minRF"
    work.mkdir()
    monkeypatch.chdir(work)
    assert project_name(".") == "report_minRF"  # no metadata, no repository: the scan's root itself, resolved
    assert project_name("/elsewhere/on/another/machine/proj") == "proj"
