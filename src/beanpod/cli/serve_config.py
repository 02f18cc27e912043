"""Where `beanpod serve` settings come from: flags, then BEANPOD_* environment variables,
then an optional TOML file (`--config`), then the defaults; `--print-config` shows the
merged result and where each value came from."""

from __future__ import annotations

from typing import Any

import click
from click.core import ParameterSource

ENV_PREFIX = "BEANPOD_"
# Options that are about this invocation, not the server's settings.
NOT_SETTINGS = frozenset({"help", "version", "config", "print_config"})


def settings_of(command: click.Command) -> dict[str, click.Option]:
    """The command's settings by their long flag name (`binlog-dir`)."""
    found = {}
    for param in command.params:
        if (
            isinstance(param, click.Option)
            and param.expose_value
            and param.name not in NOT_SETTINGS
        ):
            long = max(param.opts, key=len)
            if long.startswith("--"):
                found[long[2:]] = param
    return found


def env_name(flag: str) -> str:
    return ENV_PREFIX + flag.upper().replace("-", "_")


def bind_environment(command: click.Command) -> None:
    """Give every setting its environment variable (BEANPOD_PORT, BEANPOD_BINLOG_DIR...)."""
    for flag, option in settings_of(command).items():
        option.envvar = env_name(flag)
        option.show_envvar = True


def load_config_file(ctx: click.Context, param: click.Parameter, path: str | None) -> str | None:
    """`--config FILE`: its keys are the long flag names; they become the defaults that the
    environment and flags override."""
    if path is None:
        return None
    import tomllib  # here: only --config reads TOML (~1 ms of start-up otherwise)

    try:
        with open(path, "rb") as handle:
            table = tomllib.load(handle)
    except OSError as exc:
        raise click.BadParameter(f"cannot read {path}: {exc.strerror}", ctx, param) from None
    except tomllib.TOMLDecodeError as exc:
        raise click.BadParameter(f"{path} is not valid TOML: {exc}", ctx, param) from None
    ctx.default_map = _defaults_from(table, settings_of(ctx.command), path, ctx, param)
    return path


def _defaults_from(
    table: dict[str, Any], settings: dict[str, click.Option], path: str,
    ctx: click.Context, param: click.Parameter,
) -> dict[str, Any]:  # fmt: skip
    section = table.get("serve", table)  # `[serve]` or top-level keys
    defaults = {}
    for key, value in section.items():
        option = settings.get(key.replace("_", "-"))
        if option is None:
            known = ", ".join(sorted(settings))
            raise click.BadParameter(
                f"{path}: unknown setting {key!r} (known: {known})", ctx, param
            )
        defaults[option.name or key] = value
    return defaults


def describe(ctx: click.Context, notes: dict[str, tuple[Any, str]] | None = None) -> str:
    """The merged settings as TOML, each with where its value came from; `notes` gives
    some defaults their effective value and a word on it (flag -> (value, origin))."""
    lines = ["[serve]"]
    for flag, option in settings_of(ctx.command).items():
        name = option.name or flag
        value = ctx.params.get(name)
        source = ctx.get_parameter_source(name)
        origin = _source(source, flag)
        if notes and flag in notes and source is ParameterSource.DEFAULT:
            value, origin = notes[flag]
        elif value is None and source is not ParameterSource.DEFAULT:
            value = "off"  # given, and read as None: turned off (--workq-port off)
        if value is None:  # TOML has no null: an unset setting is shown commented out
            lines.append(f"# {flag} = (unset)  # {origin}")
        else:
            lines.append(f"{flag} = {_toml(value)}  # {origin}")
    return "\n".join(lines)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, tuple | list):  # a repeatable flag
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _source(source: ParameterSource | None, flag: str) -> str:
    if source is ParameterSource.COMMANDLINE:
        return "flag"
    if source is ParameterSource.ENVIRONMENT:
        return f"environment ({env_name(flag)})"
    if source is ParameterSource.DEFAULT_MAP:
        return "config file"
    return "default"
