"""The small networks: ``LocateNet`` (tile centres and tile area), ``TileNet`` (one tile's content), ``OctagonNet`` (its price octagon)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from scanner.alhambra.reader import KINDS, PRICES, ROTATIONS
from scoring.alhambra.palace import BUILDING_TYPES


def _block(cin: int, cout: int, stride: int = 1) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class LocateNet(nn.Module):
    """A small U-Net: (N, 3, 240, 320) in 0-1 -> ``heat`` and ``mask`` logits at stride 4 (N, 1, 60, 80)."""

    def __init__(self) -> None:
        super().__init__()
        self.e1 = _block(3, 12, 2)  # /2
        self.e2 = _block(12, 24, 2)  # /4
        self.e3 = nn.Sequential(_block(24, 40, 2), _block(40, 40))  # /8
        self.e4 = nn.Sequential(_block(40, 64, 2), _block(64, 64))  # /16
        self.e5 = nn.Sequential(_block(64, 96, 2), _block(96, 96))  # /32
        self.d4 = _block(96 + 64, 48)
        self.d3 = _block(48 + 40, 24)
        self.d2 = nn.Sequential(nn.Conv2d(24 + 24, 16, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(inplace=True))
        self.head = nn.Conv2d(16, 2, 3, 1, 1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x2 = self.e2(self.e1(x))
        x3 = self.e3(x2)
        x4 = self.e4(x3)
        x5 = self.e5(x4)
        y = self.d4(torch.cat([F.interpolate(x5, size=x4.shape[2:], mode="nearest"), x4], 1))
        y = self.d3(torch.cat([F.interpolate(y, size=x3.shape[2:], mode="nearest"), x3], 1))
        y = self.d2(torch.cat([F.interpolate(y, size=x2.shape[2:], mode="nearest"), x2], 1))
        out = self.head(y)
        return out[:, :1], out[:, 1:]


class TileNet(nn.Module):
    """(N, 3, 64, 64) in 0-1 -> logits ``kind`` (8), ``walls`` (4, crop order), ``price`` (12), ``rotation`` (4)."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            _block(3, 16, 2),  # 32
            _block(16, 32, 2),  # 16
            _block(32, 48, 2),
            _block(48, 48),  # 8
            _block(48, 64, 2),
            _block(64, 64),  # 4
        )
        self.kind = nn.Linear(64 * 2, len(KINDS))
        self.walls = nn.Conv2d(64, 4, 1)
        self.price = nn.Linear(64 * 16, len(PRICES))
        self.rotation = nn.Linear(64 * 2, len(ROTATIONS))
        self.dropout = nn.Dropout(0.1)
        self.embedding_output = False  # export sets it: the pooled features become an "embedding" output (tablescan adapt)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        f = self.features(x)  # (N, 64, 4, 4)
        pooled = torch.cat([f.mean(dim=(2, 3)), f.amax(dim=(2, 3))], 1)
        pooled = self.dropout(pooled)
        # walls: each side reads the border row/column of the feature map
        w = self.walls(f)  # (N, 4, 4, 4): channel c = side c
        top = w[:, 0, 0, :].mean(1)
        right = w[:, 1, :, -1].mean(1)
        bottom = w[:, 2, -1, :].mean(1)
        left = w[:, 3, :, 0].mean(1)
        walls = torch.stack([top, right, bottom, left], 1)
        price = self.price(self.dropout(f.flatten(1)))
        heads = (self.kind(pooled), walls, price, self.rotation(pooled))
        return (*heads, pooled) if self.embedding_output else heads


class OctagonNet(nn.Module):
    """(N, 3, 48, 48) in 0-1, one corner patch -> logits ``present`` (1: an upright price octagon), ``kind`` (6 types), ``price`` (12).

    Small on purpose: the scanner reads one patch of every tile when the tile classifier is sure of
    north, four otherwise (``scanner.alhambra.octagon.classifier_north``). The patch is first folded into
    2x2 blocks (24x24, 12 channels: every pixel kept, a digit's strokes are a pixel or two wide),
    read there by a layer of 32 channels, then two strided layers bring it to 12x12 and 6x6, where
    the digits (~3 px at 12x12) are still apart; the colour is pooled over the map, the digits read
    from it by place.
    """

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.PixelUnshuffle(2),  # 24
            _block(12, 32),
            _block(32, 32, 2),  # 12
            _block(32, 48),
            _block(48, 64, 2),  # 6
            _block(64, 64),
        )
        self.present = nn.Linear(64 * 2, 1)
        self.kind = nn.Linear(64 * 2, len(BUILDING_TYPES))
        self.price = nn.Linear(64 * 36, len(PRICES))
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        f = self.features(x)  # (N, 64, 6, 6)
        pooled = self.dropout(torch.cat([f.mean(dim=(2, 3)), f.amax(dim=(2, 3))], 1))
        return self.present(pooled)[:, 0], self.kind(pooled), self.price(self.dropout(f.flatten(1)))
