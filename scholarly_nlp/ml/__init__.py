"""Model building blocks shared by components: backbones and registered thinc architectures."""
