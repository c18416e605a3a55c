"""The project model a scan builds once, from files only (nothing is imported or executed).

- :mod:`.surfaces`: configuration surfaces in Python (argparse/click/typer options, configurator-style
  globals overridable from the command line, Lightning ``Trainer`` arguments);
- :mod:`.configs`: YAML/Hydra/OmegaConf config values and Hydra config groups;
- :mod:`.flow`: cross-file value flow joined from per-file summaries (NumPy float64 through function
  returns and parameters onto a device);
- :mod:`.remedy`: what it costs to fix one finding (a flag, a local edit, wiring an in-repo pure-PyTorch
  path, a dependency swap, or nothing possible), the rungs of the outlook's cost ladder.
"""
