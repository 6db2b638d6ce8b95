"""The three small Sagrada networks (PyTorch, training only; the scanner runs their ONNX exports).

- ``CellNet``: one 48x48 cell crop -> die? (2), colour (6: none R Y G B P), value (7: none 1-6);
  it sees the crop beside a copy balanced on the crop's own white (``WhiteReference``: the pips).
  ``CellEnsemble`` reads several trained apart as one.
- ``FinderNet``: the photo letterboxed to 128x128 -> grid-area mask logits at 32x32.
- ``RefinerNet``: a 96x96 patch around a guessed quad -> 4 corner heatmaps at 48x48 and which
  guessed corner is the board's top-left (4).
"""

from __future__ import annotations

from typing import cast

import torch
from torch import nn


def conv(cin: int, cout: int, stride: int = 1, dilation: int = 1) -> nn.Sequential:
    """3x3 convolution, batch norm, ReLU."""
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, stride=stride, padding=dilation, dilation=dilation, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


class WhiteReference(nn.Module):
    """The crop beside a copy of it balanced on its own white: 3 channels in, 6 out (no weights).

    Every Sagrada die has white pips, so the whitest pixels in the middle of a cell crop (the
    largest smallest-channel value: white, not merely bright yellow) show the light's colour. Each
    channel is scaled so their mean becomes ``WHITE`` (gains limited to ``GAINS``, so a crop
    without white is changed only so far). It runs inside the exported model, so the scanner,
    training and adaptation all see the same thing.
    """

    WHITE = 0.9
    GAINS = (0.6, 3.0)

    def __init__(self, share: float = 0.02) -> None:
        super().__init__()
        self.share = share

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n, channels, height, width = x.shape
        centre = x[:, :, height // 4 : height - height // 4, width // 4 : width - width // 4].reshape(n, channels, -1)
        count = max(1, int(self.share * centre.shape[-1]))
        whitest = centre.min(dim=1).values.topk(count, dim=1).indices
        reference = torch.gather(centre, 2, whitest.unsqueeze(1).expand(n, channels, count)).mean(dim=2)
        gain = (self.WHITE / reference.clamp(min=1e-3)).clamp(*self.GAINS)
        return torch.cat([x, (x * gain[:, :, None, None]).clamp(0, 1)], dim=1)


class CellNet(nn.Module):
    """Cell crop classifier with three heads sharing one small backbone, fed the crop and its white-balanced copy."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            WhiteReference(),
            conv(6, 16),
            nn.MaxPool2d(2),  # 24: full-resolution first layer, pips are 3 px
            conv(16, 32),
            conv(32, 32),
            nn.MaxPool2d(2),  # 12
            conv(32, 64),
            nn.MaxPool2d(2),  # 6
            conv(64, 64),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
            nn.Dropout(0.1),
        )
        self.die = nn.Linear(64, 2)
        self.colour = nn.Linear(64, 6)
        self.value = nn.Linear(64, 7)

    def heads_and_features(self, x: torch.Tensor) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """The three heads' logits and the 64-d pooled features they read."""
        f = self.features(x)
        return (self.die(f), self.colour(f), self.value(f)), f

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.heads_and_features(x)[0]


class CellEnsemble(nn.Module):
    """Cell networks (each from its own initial weights) read as one: each head is the mean of the members' log-probabilities.

    One network's reading of real dice moves by up to a point and a half of cells from one training to
    the next; the mean of a few is steadier. A mean of log-probabilities is itself a
    head's logits (up to a constant), so the scanner reads it as it reads one network's.
    """

    def __init__(self, members: list[CellNet]) -> None:
        super().__init__()
        if not members:
            raise ValueError("a cell ensemble needs at least one member")
        self.members = nn.ModuleList(members)

    def heads_and_features(self, x: torch.Tensor) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """The three averaged heads and the members' pooled features side by side (64 per member)."""
        heads: list[list[torch.Tensor]] = [[], [], []]
        features = []
        for member in cast(list[CellNet], list(self.members)):
            logits, f = member.heads_and_features(x)
            features.append(f)
            for index, head in enumerate(logits):
                heads[index].append(torch.log_softmax(head, dim=1))
        return tuple(torch.stack(each).mean(dim=0) for each in heads), torch.cat(features, dim=1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return self.heads_and_features(x)[0]


class CellNetWithEmbedding(nn.Module):
    """Export wrapper: the three heads plus the pooled features (``embedding``, for adaptation): 64-d, or 64 per ensemble member."""

    def __init__(self, net: CellNet | CellEnsemble) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        (die, colour, value), f = self.net.heads_and_features(x)
        return die, colour, value, f


class FinderNet(nn.Module):
    """Grid-area segmentation at stride 4 with a dilated context path (input 128x128 -> 32x32)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv(3, 12, 2), conv(12, 24, 2), conv(24, 24))  # 32
        self.down = nn.Sequential(conv(24, 32, 2), conv(32, 32, dilation=2), conv(32, 32, dilation=4), conv(32, 32, dilation=8))  # 16
        self.fuse = nn.Sequential(nn.Conv2d(24 + 32, 16, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.head = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        near = self.stem(x)
        far = self.down(near)
        up = nn.functional.interpolate(far, scale_factor=2.0, mode="bilinear", align_corners=False)
        return self.head(self.fuse(torch.cat([near, up], dim=1)))[:, 0]


class RefinerNet(nn.Module):
    """Corner heatmaps at stride 2 and an orientation head (input 96x96)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Sequential(conv(3, 16, 2), conv(16, 24))  # 48
        self.mid = nn.Sequential(conv(24, 32, 2), conv(32, 32, dilation=2))  # 24
        self.deep = nn.Sequential(conv(32, 48, 2), conv(48, 64, 2))  # 6
        self.fuse = nn.Sequential(nn.Conv2d(24 + 32, 16, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.heat = nn.Conv2d(16, 4, 3, padding=1)
        self.turn = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 4))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        near = self.stem(x)
        mid = self.mid(near)
        up = nn.functional.interpolate(mid, scale_factor=2.0, mode="bilinear", align_corners=False)
        heat = self.heat(self.fuse(torch.cat([near, up], dim=1)))
        return heat, self.turn(self.deep(mid))


class LocateNet(nn.Module):
    """Cell centres and grid area: a small U-Net, (N, 3, 240, 320) -> ``heat`` and ``mask`` logits at stride 4 (N, 1, 60, 80)."""

    def __init__(self) -> None:
        super().__init__()
        self.e1 = conv(3, 12, 2)  # /2
        self.e2 = conv(12, 24, 2)  # /4
        self.e3 = nn.Sequential(conv(24, 40, 2), conv(40, 40))  # /8
        self.e4 = nn.Sequential(conv(40, 64, 2), conv(64, 64))  # /16
        self.e5 = nn.Sequential(conv(64, 80, 2), conv(80, 80, dilation=2))  # /32
        self.d4 = conv(80 + 64, 48)
        self.d3 = conv(48 + 40, 32)
        self.d2 = nn.Sequential(nn.Conv2d(32 + 24, 24, 1, bias=False), nn.BatchNorm2d(24), nn.ReLU(inplace=True), conv(24, 24))
        self.head = nn.Conv2d(24, 2, 3, 1, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        up = nn.functional.interpolate
        x2 = self.e2(self.e1(x))
        x3 = self.e3(x2)
        x4 = self.e4(x3)
        x5 = self.e5(x4)
        y = self.d4(torch.cat([up(x5, size=x4.shape[2:], mode="nearest"), x4], 1))
        y = self.d3(torch.cat([up(y, size=x3.shape[2:], mode="nearest"), x3], 1))
        y = self.d2(torch.cat([up(y, size=x2.shape[2:], mode="nearest"), x2], 1))
        out = self.head(y)
        return out[:, :1], out[:, 1:]
